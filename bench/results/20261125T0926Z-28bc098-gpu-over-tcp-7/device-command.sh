#!/usr/bin/env bash
# R7 (issue 15 target 6), one device call on 1x H100: does the I/O loop's sleep before the response cost GPU-staged
# TCP rows more than CPU rows? Alternated rounds of MORI_IO_POLLER_YIELD = 20us (default) / 100us / 300us, each run
# measuring the GPU<->GPU row and its CPU<->CPU row back to back at 1, 2, 4 MiB (bench/record-gpu-tcp-ratio.sh,
# --compare-cpu-rounds 3, TRACE=1 for blocking selects per transfer), writes in 3 rounds (order rotated), then reads,
# then MORI_IO_POLLER_SPIN=150us, as time allows. Both JVMs get the setting (the child serve inherits the environment).
# RUN_SH, ROUNDS, ITERS, LIMIT and BENCH_WRAP (a dry run's bench command) may be overridden.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-228}
bench_cmd=${BENCH_WRAP:-bash $run_sh org.mori4j.bench.Mori4jCommand}
cp .device/r7-git.txt "$x/git.txt" 2>/dev/null
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  lscpu | grep -E 'Model name|Socket|NUMA node|L3|Thread|^CPU\(s\)'; uptime; } > "$x/machine.txt" 2>&1
variant() { # name run rep env...
  local name=$1 what=$2 rep=$3; shift 3
  local left=$(( limit - $(el) ))
  [ $left -lt 24 ] && { echo "skip $name-$what-$rep (left $left s)" >> "$x/timeline.txt"; return; }
  env "$@" OUT=$x/$name-$what-$rep TRACE=1 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-200} ONLY="^$what\$" \
    MORI4J_CMD="$bench_cmd" timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$name-$what-$rep.log" 2>&1
  echo "$name-$what-$rep rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
y20() { variant y20 "$1" "$2" MORI_IO_POLLER_YIELD=20us; }
y100() { variant y100 "$1" "$2" MORI_IO_POLLER_YIELD=100us; }
y300() { variant y300 "$1" "$2" MORI_IO_POLLER_YIELD=300us; }
y20 write-gpu-gpu 1; y100 write-gpu-gpu 1; y300 write-gpu-gpu 1
y300 write-gpu-gpu 2; y20 write-gpu-gpu 2; y100 write-gpu-gpu 2
y100 write-gpu-gpu 3; y300 write-gpu-gpu 3; y20 write-gpu-gpu 3
y20 read-gpu-gpu 1; y300 read-gpu-gpu 1
variant s150 write-gpu-gpu 1 MORI_IO_POLLER_SPIN=150us
y100 read-gpu-gpu 1
find "$x" -name 'trace-*' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/ratios.txt > "$x/all-ratios.txt" 2>/dev/null
echo "done at $(el) s" >> "$x/timeline.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
