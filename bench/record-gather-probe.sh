#!/usr/bin/env bash
# Records the XGMI batch kernel's GPU time (issue 15 target 3, issue 14 target 2's kernel part) into DIR (default
# bench/results/<UTC time>-<commit>-gather-probe): GatherKernelProbe times, by GPU events and per batch shape, the
# backend's kernel and its variants against one contiguous copy of the same bytes on the same route and stream.
# With two or more GPUs it runs GPU0 -> GPU1 in both directions (push: the kernel on GPU0 stores to GPU1, what a
# batchWrite does; pull: the kernel on GPU1 loads from GPU0, a batchRead), the copy being cuMemcpyPeerAsync; with
# one GPU, device-local against cuMemcpyDtoDAsync. Shapes: 4,096 x 4 KiB, 1,024 x 16 KiB, Llama-3-70B's 4,096-token
# KV (40,960 x 32 KiB as 160 launches of 256 and as one launch), 1 x 256 MiB; blocks in shuffled slots on both sides.
# Every variant's bytes are checked once (column "bytes ok") before it is timed. Written for the GPU machine (no
# Maven, no git; the probe is a test class, which .device/run.sh puts on its class path):
#   MORI4J_CMD       how to start a main class (default "bash .device/run.sh")
#   MORI4J_COMMIT    the commit the build came from (else git, else "unknown")
#   PROBE_DEVICES    e.g. "0,1" or "0" (default 0,1 with two or more GPUs, else 0)
#   PROBE_VARIANTS   comma list (default: all but the register-capped occ6/occ8); PROBE_SHAPES, PROBE_ITERS likewise
#   PROBE_STREAMS    stream counts for the 160-launch KV shape (default 1,8)
#   PROBE_GATE       on (default: each sample's streams held until its work is issued, so GPU time excludes the
#                    host's launch calls) or off (as the first recordings, 20261125T0032Z-0549bfc-gather-kernel-1xh100)
# Writes machine.txt, probe.txt (the whole output) and gather-probe.md / gather-probe.tsv (the table).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
dir=${1:-bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-gather-probe}
mkdir -p "$dir"
read -r -a run <<< "${MORI4J_CMD:-bash .device/run.sh}"
. bench/gpu-machine-info.sh
gpus=$(gpu_count)
devices=${PROBE_DEVICES:-$([ "$gpus" -ge 2 ] && echo 0,1 || echo 0)}
args=(--devices "$devices" --out "$dir")
[ -n "${PROBE_VARIANTS:-}" ] && args+=(--variants "$PROBE_VARIANTS")
[ -n "${PROBE_SHAPES:-}" ] && args+=(--shapes "$PROBE_SHAPES")
[ -n "${PROBE_ITERS:-}" ] && args+=(--iters "$PROBE_ITERS")
[ -n "${PROBE_STREAMS:-}" ] && args+=(--streams "$PROBE_STREAMS")
[ -n "${PROBE_GATE:-}" ] && args+=(--gate "$PROBE_GATE")
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $commit"
  echo "command: ${run[*]} org.mori4j.transport.xgmi.GatherKernelProbe ${args[*]}"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  gpu_machine_info
} > "$dir/machine.txt"
cat "$dir/machine.txt"
"${run[@]}" org.mori4j.transport.xgmi.GatherKernelProbe "${args[@]}" 2>&1 | grep -v '|-INFO in ch.qos\|WARN in ch.qos' | tee "$dir/probe.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || echo "record-gather-probe.sh: the probe failed (exit $rc); see $dir/probe.txt" >&2
exit "$rc"
