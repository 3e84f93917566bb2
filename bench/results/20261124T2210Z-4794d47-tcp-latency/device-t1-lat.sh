#!/usr/bin/env bash
# T1: TCP 4 KiB session latency on the GPU host's CPUs (two JVMs over loopback), three settings, baselines in each run.
# Usage: bash .device/t1-lat.sh ; results under $OUT/t1
set -u
o=${OUT:-/tmp/t1out}/t1; mkdir -p "$o"
{ date -u; hostname; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'; uptime; free -g | head -2;
  for t in ucx_perftest iperf3; do command -v $t || echo "$t: absent"; done; } > "$o/machine.txt" 2>&1
b() { n=$1; shift; { echo "== $n $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg) caller-drive=$MORI_IO_TCP_CALLER_DRIVE serve-spin=$MORI_IO_TCP_SERVE_SPIN"; } >> "$o/load.txt"
  /usr/bin/time -f "cpu user %U sys %S wall %e" -o "$o/$n.time" timeout 60 bash .device/run.sh org.mori4j.bench.Mori4jCommand bench "$@" --json "$o/$n.json" > "$o/$n.txt" 2>&1
  echo "rc=$? $n" >> "$o/load.txt"; }
S="--buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000"
for op in write read; do
  MORI_IO_TCP_CALLER_DRIVE=off MORI_IO_TCP_SERVE_SPIN=0us b off-4k-$op $S --op-type $op
  MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_SERVE_SPIN=0us b on-4k-$op $S --op-type $op
  MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_SERVE_SPIN=50us b onss50-4k-$op $S --op-type $op
done
for c in off:0us on:0us on:50us; do
  MORI_IO_TCP_CALLER_DRIVE=${c%%:*} MORI_IO_TCP_SERVE_SPIN=${c##*:} b 128x4k-${c%%:*}-${c##*:} --no-baselines
done
grep -h -E '^\| +[0-9]|ucx|nio|iperf' "$o"/*.txt | cut -c1-200 | head -60
