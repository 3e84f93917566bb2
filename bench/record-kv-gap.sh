#!/usr/bin/env bash
# Records where a KV migration's time goes on XGMI (issue 14 target 2, issue 15 target 3) into DIR (default
# bench/results/<UTC time>-<commit>-kv-gap): kv-bench Llama-3-70B, 4,096 tokens, fully scattered, one process, GPU 0 ->
# GPU T (T = 1 with two or more GPUs, else 0: then it says nothing about NVLink), push and pull, each configuration in
# a JVM of its own: the XGMI timeline on (MORI4J_XGMI_TRACE=1, kv-bench prints each stage's median, transport README
# "Timeline") with fuse-batches off and on, then both again without the trace (the figures to quote: the trace slows
# the launch path). Warm-up KV_WARMUP (default 300) untimed migrations per row, so the first row is not measured while
# the JIT still compiles the path (the first recording, 20261125T0305Z-5033add-kv-gap-1xh100, used 3). Written for the
# GPU machine (no Maven, no git). Each configuration runs twice, with the migration issued in calls of 1, 2, 4...
# layers (mori4j.kv.first-chunk-layers=1, the default) and in one call (=0, "-onecall"), for the A/B of
# bench/results/*-kv-host-2; 8 JVMs of ~7-10 s each.
#   MORI4J_CMD     how to start a main class (default "bash .device/run.sh")
#   MORI4J_COMMIT  the commit the build came from (else git, else "unknown")
#   KV_TARGET      the receiving GPU (default as above); KV_ITERS (default 20); KV_WARMUP (default 300: the host path is not steady after 30, bench/results/*-kv-launch-1xh100)
#   KV_STOP_AFTER  seconds after which no further configuration is started (default 140: one 180 s device call)
# Writes machine.txt, <config>.log / <config>.json, rc.txt (exit code and seconds per configuration), summary.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
dir=${1:-bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-kv-gap}
mkdir -p "$dir"
read -r -a run <<< "${MORI4J_CMD:-bash .device/run.sh}"
. bench/gpu-machine-info.sh
gpus=$(gpu_count)
target=${KV_TARGET:-$([ "$gpus" -ge 2 ] && echo 1 || echo 0)}
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $commit"; echo "gpus: $gpus, GPU 0 -> GPU $target"; gpu_machine_info; } > "$dir/machine.txt" 2>&1
: > "$dir/rc.txt"
config() { # name, trace 0/1, fuse on/off, first-chunk-layers (1: the default, calls of 1, 2, 4... layers; 0: one call)
  if [ "$SECONDS" -gt "${KV_STOP_AFTER:-140}" ]; then echo "$1 not run: $SECONDS s used" >> "$dir/rc.txt"; return; fi
  local t0=$SECONDS
  MORI4J_XGMI_TRACE=$2 MORI_IO_XGMI_FUSE_BATCHES=$3 MORI4J_KV_FIRST_CHUNK_LAYERS=$4 timeout 60 "${run[@]}" org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi \
    --xgmi-single-process --gpu-device 0 --target-gpu-device "$target" --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull \
    --iters "${KV_ITERS:-20}" --warmup "${KV_WARMUP:-300}" --naive-iters 0 --json "$dir/$1.json" > "$dir/$1.log" 2>&1
  echo "$1 rc=$? secs=$((SECONDS - t0))" >> "$dir/rc.txt"
}
# A/B of mori4j.kv.first-chunk-layers (kv-host-2): each configuration right after its one-call twin
config trace-unfused 1 off 1
config trace-unfused-onecall 1 off 0
config trace-fused 1 on 1
config trace-fused-onecall 1 on 0
config unfused 0 off 1
config unfused-onecall 0 off 0
config fused 0 on 1
config fused-onecall 0 on 0
grep -h "xgmi trace\|launches per\|^llama3" "$dir"/*.log > "$dir/summary.txt" 2>/dev/null
cat "$dir/rc.txt"
