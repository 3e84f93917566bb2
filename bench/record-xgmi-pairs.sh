#!/usr/bin/env bash
# Records issue 16 item 2 (XGMI between every GPU pair at once) into DIR (default
# bench/results/<UTC time>-<commit>-xgmi-pairs): `mori4j xgmi-pairs` for each engine list and each process mode,
# every run with both patterns (ring, all-to-all) and both shapes (256 MiB contiguous, 4,096 x 4 KiB batch), the raw
# driver copies of the same routes run together beside every row, and the machine it ran on. Written for the GPU
# machine, which has neither Maven nor git:
#   MORI4J_CMD        how to run mori4j, e.g. "bash .device/run.sh org.mori4j.bench.Mori4jCommand" (default ./mori4j)
#   MORI4J_COMMIT     the commit the build came from (else git, else "unknown")
#   MORI4J_MACHINE    the machine as the results name it, e.g. "1x H100 80GB HBM3, CUDA 13" (passed as --machine)
#   MORI4J_PAIRS_GPUS engine lists, space-separated (default: every GPU once, "all", with 2 or more GPUs;
#                     on one GPU "0,0 0,0,0,0": 2 and 4 engines sharing GPU0)
#   MORI4J_PAIRS_MODES  which of "single-process multi-process" to run (default both)
#   MORI4J_PAIRS_ITERS / MORI4J_PAIRS_WARMUP  measured / unmeasured iterations per row (default 100 / 10)
#   MORI4J_PAIRS_ARGS   extra flags for every run (e.g. "--size 64M")
# A failed run does not stop the others, but the script then exits 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
dir=${1:-bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-xgmi-pairs}
mkdir -p "$dir"
read -r -a mori4j <<< "${MORI4J_CMD:-./mori4j}"
read -r -a extra <<< "${MORI4J_PAIRS_ARGS:-}"
. bench/gpu-machine-info.sh
gpus=$(gpu_count)
lists=${MORI4J_PAIRS_GPUS:-$([ "$gpus" -ge 2 ] && echo all || echo "0,0 0,0,0,0")}
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $commit"
  echo "machine: ${MORI4J_MACHINE:-(not named)}"
  echo "command: ${mori4j[*]}"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "engines: $lists; modes: ${MORI4J_PAIRS_MODES:-single-process multi-process}"
  gpu_machine_info
} > "$dir/machine.txt"
cat "$dir/machine.txt"
machine=(); [ -n "${MORI4J_MACHINE:-}" ] && machine=(--machine "$MORI4J_MACHINE")
failed=0
for mode in ${MORI4J_PAIRS_MODES:-single-process multi-process}; do
  case $mode in single-process|multi-process) ;; *) echo "MORI4J_PAIRS_MODES: unknown mode '$mode' (single-process, multi-process)" >&2; exit 2;; esac
  flag=(); [ $mode = single-process ] && flag=(--single-process)
  for list in $lists; do
    sel=(); name="$mode-all"
    [ "$list" != all ] && { sel=(--gpus "$list"); name="$mode-gpus-${list//,/.}"; }
    args=(xgmi-pairs "${sel[@]}" "${flag[@]}" --iters "${MORI4J_PAIRS_ITERS:-100}" --warmup-iters "${MORI4J_PAIRS_WARMUP:-10}" "${machine[@]}" "${extra[@]}")
    echo "== mori4j ${args[*]}" | tee "$dir/$name.txt"
    "${mori4j[@]}" "${args[@]}" --json "$dir/$name.json" 2> "$dir/$name.stderr" | tee -a "$dir/$name.txt"
    rc=${PIPESTATUS[0]}
    echo "exit: $rc" | tee -a "$dir/$name.txt"
    [ "$rc" -eq 0 ] || { failed=1; tail -20 "$dir/$name.stderr"; }
  done
done
exit $failed
