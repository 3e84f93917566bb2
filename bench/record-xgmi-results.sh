#!/usr/bin/env bash
# Records issue 4's XGMI runs into DIR (default bench/results/<UTC time>-<commit>-xgmi): for the target engine
# in this JVM (--xgmi-single-process) and in a child JVM, each with the raw driver copies of the same run
# (cuMemcpyPeerAsync between two GPUs, cuMemcpyDtoDAsync on one):
#   write-256m   256 MiB writes, batch 1                          (item 2: >= 95% of the raw copy)
#   lat-4k       4 KiB session writes with await, 10,000 iters    (item 3: p50 <= 1.5x raw 4 KiB copy + sync),
#                at the default await-spin (auto: the caller spins 50 us before it parks on >= 8 processors)
#   lat-4k-nospin  the same with MORI_IO_AWAIT_SPIN=0us (the caller parks at once)
#   batch-4096   4,096 x 4 KiB in one batchWrite                  (item 4: >= 100 GB/s; a raw copy loop beside it)
#                sequential blocks (joined by the engine into one copy) and --block-order reversed (one kernel launch)
#   batch-1024x16k-reversed  1,024 x 16 KiB in one batchWrite, reversed (issue 15 target 3: >= 300 GB/s on 2x H200)
# and the machine they ran on. JVM flags (e.g. DEVICE_JAVA_OPTS for .device/run.sh) are passed on from the
# environment and written to machine.txt. Written for the GPU machine, which has neither Maven nor git:
#   MORI4J_CMD     how to run mori4j, e.g. "bash .device/run.sh org.mori4j.bench.Mori4jCommand" (default ./mori4j)
#   MORI4J_COMMIT  the commit the build came from (else git, else "unknown")
#   MORI4J_GPU_TARGET  the target's device (default 1 with two or more GPUs, else 0)
#   MORI4J_XGMI_MODES  which of "same-process two-process" to run (default both; all twelve runs take about
#                      12-14 min on 1x H100, so on a machine with a 10-minute limit per command run one per call)
#   MORI4J_XGMI_RUNS   which runs, by name without the mode (default all: write-256m lat-4k lat-4k-nospin
#                      batch-4096 batch-4096-reversed batch-1024x16k-reversed)
# A failed run does not stop the others, but the script then exits 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
dir=${1:-bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-xgmi}
mkdir -p "$dir"
read -r -a mori4j <<< "${MORI4J_CMD:-./mori4j}"
. bench/gpu-machine-info.sh
gpus=$(gpu_count)
target=${MORI4J_GPU_TARGET:-$([ "$gpus" -ge 2 ] && echo 1 || echo 0)}
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $commit"
  echo "command: ${mori4j[*]}"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "runs:    GPU0 -> GPU$target"
  echo "jvm:     MORI4J_JAVA_OPTS='${MORI4J_JAVA_OPTS:-}' DEVICE_JAVA_OPTS='${DEVICE_JAVA_OPTS:-}'"
  gpu_machine_info
} > "$dir/machine.txt"
cat "$dir/machine.txt"
failed=0
run() {
  local name=$1; shift
  case " ${MORI4J_XGMI_RUNS:-${name#*-process-}} " in *" ${name#*-process-} "*) ;; *) return 0;; esac
  echo "== mori4j bench $*" | tee "$dir/$name.txt"
  [ -n "${RUN_ENV:-}" ] && echo "env: $RUN_ENV" | tee -a "$dir/$name.txt"
  env ${RUN_ENV:-} "${mori4j[@]}" bench --backend xgmi --gpu-device 0 --target-gpu-device "$target" "$@" --json "$dir/$name.json" 2> "$dir/$name.stderr" | tee -a "$dir/$name.txt"
  local rc=${PIPESTATUS[0]}
  echo "exit: $rc" | tee -a "$dir/$name.txt"
  [ "$rc" -eq 0 ] || { failed=1; tail -20 "$dir/$name.stderr"; }
}
for mode in ${MORI4J_XGMI_MODES:-same-process two-process}; do
  case $mode in same-process|two-process) ;; *) echo "MORI4J_XGMI_MODES: unknown mode '$mode' (same-process, two-process)" >&2; exit 2;; esac
  flag=(); [ $mode = same-process ] && flag=(--xgmi-single-process)
  run "$mode-write-256m" "${flag[@]}" --buffer-size 256M --transfer-batch-size 1 --iters 200
  run "$mode-lat-4k" "${flag[@]}" --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000
  # the same with the waiting caller parking at once (a park/unpark costs several microseconds)
  RUN_ENV="MORI_IO_AWAIT_SPIN=0us" run "$mode-lat-4k-nospin" "${flag[@]}" --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000
  run "$mode-batch-4096" "${flag[@]}" --buffer-size 4096 --transfer-batch-size 4096 --enable-batch-transfer --iters 200
  # sequential 4 KiB blocks are contiguous and the engine joins them into one 16 MiB copy; reversed, each block
  # is its own entry and the batch is one gather/scatter kernel launch
  run "$mode-batch-4096-reversed" "${flag[@]}" --buffer-size 4096 --transfer-batch-size 4096 --enable-batch-transfer --block-order reversed --iters 200
  run "$mode-batch-1024x16k-reversed" "${flag[@]}" --buffer-size 16K --transfer-batch-size 1024 --enable-batch-transfer --block-order reversed --iters 200
done
# an SVG beside every run's JSON: bandwidth and latency by size, the rows beside the baselines (subtitle from machine.txt)
"${mori4j[@]}" plot --dir "$dir" || echo "plots not drawn (mori4j plot failed)" >&2
exit $failed
