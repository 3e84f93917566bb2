#!/usr/bin/env bash
# Records the runs behind issue 3's acceptance point 3 into DIR (default bench/results/<UTC time>-<commit>-gpu/;
# on the GPU machine pass a folder under $OUT, whose files come back): GPU<->GPU
# writes over TCP between two JVMs (this JVM on GPU 0, the target child JVM on GPU 1, or GPU 0 on a machine with
# one GPU), 64 MiB, each run with --compare-cpu (the CPU<->CPU figure of the same run, same target process) and
# the baselines (raw cuMemcpy H2D/D2H from pinned memory on GPU 0, D2D and the peer copy; NIO, iperf3, UCX),
# plus what machine produced them. Written for the GPU machine, which has neither Maven nor git:
#   MORI4J_CMD  the command that runs mori4j, e.g. "bash .device/run.sh org.mori4j.bench.Mori4jCommand" or
#               "java --enable-native-access=ALL-UNNAMED -jar bench/target/mori4j-bench-0.1.0-SNAPSHOT.jar"
#               (default ./mori4j, which needs a JDK and Maven to build)
#   MORI4J_COMMIT  the commit the build came from; else git if present, else the first line of COMMIT or
#               .device/COMMIT, else "unknown"
#   MORI4J_JAVA the java binary, for machine.txt only (else JAVA_HOME, /tmp/devjre/jre/bin/java, PATH)
#   MORI4J_GPU_TARGET  the target's device (default 1 with two or more GPUs, else 0)
#   MORI4J_GPU_RUNS    how many times the 64 MiB write is repeated (default 3: judge on the median ratio)
# Each run's exit code is recorded; a failed run does not stop the others, but the script then exits 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -n "${MORI4J_COMMIT:-}" ]; then
  commit_full=$MORI4J_COMMIT
elif command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
  commit_full="$(git rev-parse HEAD)$([ -n "$(git status --porcelain -- . ':!bench/results' 2>/dev/null)" ] && echo "-dirty" || true)"
elif [ -f COMMIT ]; then
  commit_full=$(head -1 COMMIT)
elif [ -f .device/COMMIT ]; then
  commit_full=$(head -1 .device/COMMIT)
else
  commit_full=unknown
fi
# a full hash names the directory by its first 7 characters, as `git rev-parse --short` would
commit_short=$(echo "$commit_full" | sed -E 's/^([0-9a-f]{7})[0-9a-f]{33}/\1/')
dir=${1:-"bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit_short-gpu"}
mkdir -p "$dir"

read -r -a mori4j <<< "${MORI4J_CMD:-./mori4j}"
"${mori4j[@]}" --help >/dev/null || { echo "record-gpu-results: '${mori4j[*]} --help' failed; set MORI4J_CMD" >&2; exit 1; }

java_bin=${MORI4J_JAVA:-}
# a MORI4J_CMD that starts with a java binary names the java that runs the bench
case "${mori4j[0]}" in */java|java) [ -z "$java_bin" ] && java_bin=$(command -v "${mori4j[0]}" || true) ;; esac
for j in "${JAVA_HOME:+$JAVA_HOME/bin/java}" /tmp/devjre/jre/bin/java "$(command -v java 2>/dev/null || true)"; do
  [ -z "$java_bin" ] && [ -n "$j" ] && [ -x "$j" ] && java_bin=$j
done
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true); fi
target=${MORI4J_GPU_TARGET:-$([ "$gpus" -ge 2 ] && echo 1 || echo 0)}
runs=${MORI4J_GPU_RUNS:-3}
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $commit_full"
  echo "command: ${mori4j[*]}"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "memory:  $(free -g 2>/dev/null | awk '/^Mem:/{print $2 " GiB"}')"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the runs)"
  echo "java:    ${java_bin:-not found} $([ -n "$java_bin" ] && "$java_bin" -version 2>&1 | head -1)"
  echo "iperf3:  $(iperf3 --version 2>/dev/null | head -1 || echo 'not installed')"
  echo "ucx:     $(ucx_info -v 2>/dev/null | head -1 || echo 'not installed')"
  echo "runs:    GPU0 -> GPU$target, 64 MiB x 1, $runs times; then read 64 MiB and a 4 KiB..64 MiB write sweep"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "== nvidia-smi -L"
    nvidia-smi -L 2>&1
    echo "== driver / CUDA (nvidia-smi)"
    nvidia-smi 2>&1 | grep -E 'Driver Version|CUDA Version' | sed 's/|//g; s/  */ /g'
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm \
      --format=csv 2>&1
    echo "== nvidia-smi topo -m"
    nvidia-smi topo -m 2>&1
  else
    echo "nvidia-smi: not found"
  fi
} > "$dir/machine.txt"
cat "$dir/machine.txt"

failed=0
run() {
  local name=$1; shift
  echo "== mori4j bench $* --json $dir/$name.json" | tee "$dir/$name.txt"
  "${mori4j[@]}" bench "$@" --json "$dir/$name.json" 2> >(tee "$dir/$name.stderr" >&2) | tee -a "$dir/$name.txt"
  local rc=${PIPESTATUS[0]}
  echo "exit code: $rc" | tee -a "$dir/$name.txt"
  [ "$rc" -eq 0 ] || failed=1
}
gpu=(--mem-type gpu --gpu-device 0 --target-gpu-device "$target" --compare-cpu)
# the acceptance row: 200 iterations of 64 MiB (13 GB per pass); each run measures the GPU rows, then the CPU
# rows of the same target, then the baselines, so a neighbour's burst of load moves one run, not the median
for i in $(seq 1 "$runs"); do run gpu-write-64m-$i "${gpu[@]}" --buffer-size 64M --transfer-batch-size 1 --iters 200 --warmup-iters 10; done
run gpu-read-64m "${gpu[@]}" --op-type read --buffer-size 64M --transfer-batch-size 1 --iters 200 --warmup-iters 10
run gpu-write-sweep "${gpu[@]}" --all --sweep-start-size 4K --transfer-batch-size 1 --iters 100 --warmup-iters 20
for f in "$dir"/gpu-write-64m-*.txt "$dir"/gpu-read-64m.txt; do
  echo "$(basename "$f" .txt): $(grep -E '^ +64 MiB x 1: gpu avg BW' "$f" | sed 's/^ *//')"
done | tee "$dir/comparison.txt"
# an SVG beside every run's JSON: bandwidth and latency by size, the rows beside the baselines (subtitle from machine.txt)
"${mori4j[@]}" plot --dir "$dir" || echo "plots not drawn (mori4j plot failed)" >&2
echo "recorded in $dir"
exit "$failed"
