#!/usr/bin/env bash
# Records issue 11's benchmark (acceptance point 4) into bench/results/<UTC time>-<commit>-rdma-<provider>/: the RDMA
# backend beside TCP in the same runs (--compare-tcp: one TCP-only engine against the same target, alternating per
# point), 4 KiB and 64 MiB writes and reads (batch 1) and MORI's default row (128 x 4 KiB writes per iteration), plus
# what machine and tree produced them and `mori4j info` (which says why there is no RDMA device, where there is none).
# The provider is MORI4J_RDMA_PROVIDER_RUN (default software: emulation, for machines without a NIC). Run it on a
# quiet machine: the figures are only as good as the absence of other load on the cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

provider=${MORI4J_RDMA_PROVIDER_RUN:-software}
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD)}
dirty=$([ -n "$(git status --porcelain -- . ':!bench/results' 2>/dev/null)" ] && echo "-dirty" || true)
dir="bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-rdma-$provider"
mkdir -p "$dir"

# MORI4J_CMD overrides the launcher, e.g. to run a jar that is already built without a rebuild check
read -r -a mori4j <<< "${MORI4J_CMD:-./mori4j}"
"${mori4j[@]}" --help >/dev/null # ./mori4j builds when stale, before anything is timed
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $(git rev-parse HEAD)$dirty"
  echo "machine: ${MORI4J_MACHINE:-(set MORI4J_MACHINE to name the hardware)}"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  echo "memory:  $(free -g | awk '/^Mem:/{print $2 " GiB"}')"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the runs)"
  echo "java:    $(${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java -version 2>&1 | head -1)"
  echo "provider: $provider$([ "$provider" = software ] && echo ' (user-space RDMA device over TCP: emulation, not NIC performance)')"
  if [ -n "$dirty" ]; then echo "modified outside bench/results (working tree the jar was built from):"; git status --porcelain -- . ':!bench/results' | sed 's/^/  /'; fi
} > "$dir/machine.txt"
cat "$dir/machine.txt"
"${mori4j[@]}" info > "$dir/info.txt" 2>&1 || true

run() {
  local name=$1; shift
  echo "== mori4j bench --backend rdma --rdma-provider $provider $* --json $dir/$name.json" | tee "$dir/$name.txt"
  "${mori4j[@]}" bench --backend rdma --rdma-provider "$provider" "$@" --json "$dir/$name.json" | tee -a "$dir/$name.txt"
}
# 4 KiB: latency-bound, many iterations; 64 MiB: bandwidth-bound, fewer (each iteration moves 64 MiB per backend).
# Baselines (NIO stream, ping-pong, iperf3, UCX) only with the 64 MiB write, for context; the ratio that issue 11 asks
# about is RDMA against TCP of the same run, which every run prints.
run write-4k --buffer-size 4K --transfer-batch-size 1 --iters 2000 --warmup-iters 100 --no-baselines
run read-4k --op-type read --buffer-size 4K --transfer-batch-size 1 --iters 2000 --warmup-iters 100 --no-baselines
run write-64m --buffer-size 64M --transfer-batch-size 1 --iters 30 --warmup-iters 5 --pingpong-iters 2000 --iperf-seconds 3
run read-64m --op-type read --buffer-size 64M --transfer-batch-size 1 --iters 30 --warmup-iters 5 --no-baselines
# the same 64 MiB write with the completion queue pollers asleep on their channel instead of spinning: on a machine with
# few cores a spinning poller competes with the software device's I/O threads for them
run write-64m-event --poll-cq-mode EVENT --buffer-size 64M --transfer-batch-size 1 --iters 30 --warmup-iters 5 --no-baselines
# MORI's default row: 128 separate 4 KiB writes issued back to back, then waited for
run burst-4k-128 --buffer-size 4K --transfer-batch-size 128 --iters 500 --warmup-iters 50 --no-baselines
for f in "$dir"/*.txt; do
  case $(basename "$f") in machine.txt|info.txt) continue ;; esac
  grep -E '^  [0-9]+ [KMG]?i?B x [0-9]+: rdma ' "$f" | sed "s/^ */$(basename "$f" .txt): /"
done | tee "$dir/comparison.txt"
# an SVG beside every run's JSON: bandwidth and latency by size, the rows beside the baselines (subtitle from machine.txt)
"${mori4j[@]}" plot --dir "$dir" || echo "plots not drawn (mori4j plot failed)" >&2
echo "recorded in $dir"
