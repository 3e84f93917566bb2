#!/usr/bin/env bash
# R6 (issue 15 target 6), one device call on 1x H100: why GPU memory over TCP stays at ~56-62% of CPU<->CPU at 1 MiB.
# Every run is bench/record-gpu-tcp-ratio.sh (each GPU row beside its CPU<->CPU row, interleaved rounds) with both
# traces on: the staging timeline (GpuStageTrace) and the socket-call counts per transfer for CPU and GPU rows alike
# (TcpCallTrace). Settings alternated run by run: base (defaults: 4 middle pieces, gather on, scatter off) and p2
# (MORI_IO_TCP_GPU_STAGING_PIECES=2: a 1 MiB payload in 4 pieces, 64K+448K+448K+64K, so every piece has a staging
# buffer from the start and one gathering write can carry all of it). Mixed ends (GPU sender -> CPU target, CPU sender
# -> GPU target) once each with base, to tell the sender's staging from the receiver's. Then, as time allows,
# strace -f -c of a CPU-only and a GPU-only 1 MiB run (when strace is installed) and GpuTransferGpuTest.
# RUN_SH, ROUNDS, ITERS, LIMIT and BENCH_WRAP (a dry run's bench command) may be overridden.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-280}
bench_cmd=${BENCH_WRAP:-bash $run_sh org.mori4j.bench.Mori4jCommand}
cp .device/r6-git.txt "$x/git.txt" 2>/dev/null
# 1 when the packed classes have the call trace
tar -xJOf .device/classes.tar.xz --wildcards '*/org/mori4j/transport/tcp/TcpCallTrace.class' 2>/dev/null | grep -c MORI4J_TCP_CALL_TRACE > "$x/packed-calltrace.txt"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  lscpu | grep -E 'Model name|Socket|NUMA node|L3|Thread|^CPU\(s\)'; uptime
  for t in strace perf ltrace; do echo "$t: $(command -v $t || echo absent)"; done
  sysctl net.ipv4.tcp_wmem net.ipv4.tcp_rmem net.core.wmem_max net.core.rmem_max 2>/dev/null; } > "$x/machine.txt" 2>&1
variant() { # name pieces run rep
  local left=$(( limit - $(el) ))
  [ $left -lt 30 ] && { echo "skip $1-$3-$4 (left $left s)" >> "$x/timeline.txt"; return; }
  MORI_IO_TCP_GPU_STAGING_PIECES=$2 OUT=$x/$1-$3-$4 TRACE=1 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-200} ONLY="^$3\$" \
    MORI4J_CMD="$bench_cmd" timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$1-$3-$4.log" 2>&1
  echo "$1-$3-$4 rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
variant base 4 write-gpu-gpu 1
variant p2 2 write-gpu-gpu 1
variant base 4 write-gpu-cpu 1
variant base 4 write-cpu-gpu 1
variant p2 2 write-gpu-gpu 2
variant base 4 write-gpu-gpu 2
variant base 4 read-gpu-gpu 1
variant p2 2 read-gpu-gpu 1
variant p2 2 write-gpu-cpu 1
# system-call counts, all threads of both JVMs (JVM start-up included), CPU-only against GPU-only 1 MiB writes
if command -v strace >/dev/null; then
  for mem in cpu gpu; do
    left=$(( limit - $(el) ))
    [ $left -lt 40 ] && { echo "skip strace-$mem (left $left s)" >> "$x/timeline.txt"; continue; }
    timeout 35 strace -f -c -o "$x/strace-$mem.txt" -e trace=read,write,readv,writev,epoll_wait,epoll_pwait,futex,sched_yield \
      $bench_cmd bench --all --sweep-start-size 1M --sweep-max-size 1M --transfer-batch-size 1 --iters 500 --warmup-iters 20 \
      --no-baselines --mem-type $mem --op-type write > "$x/strace-$mem.log" 2>&1
    echo "strace-$mem rc=$? at $(el) s" | tee -a "$x/timeline.txt"
  done
fi
left=$(( limit - $(el) ))
if [ $left -ge 45 ]; then
  timeout 45 bash "$run_sh" --tests --include-tag gpu --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests.txt" 2>&1
  echo "gpu-tests rc=$? at $(el) s" | tee -a "$x/timeline.txt"
else
  echo "skip gpu-tests (left $left s)" >> "$x/timeline.txt"
fi
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/*.txt > "$x/all-ratios.txt" 2>/dev/null
echo "done at $(el) s" >> "$x/timeline.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
