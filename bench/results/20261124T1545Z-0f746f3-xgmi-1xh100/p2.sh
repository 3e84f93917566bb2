#!/usr/bin/env bash
# P2's device runs: $1 = part (1 or 2); logs under $OUT
set -u
cd "$(dirname "$0")/.."
M="bash .device/run.sh org.mori4j.bench.Mori4jCommand"
r=$OUT/r; mkdir -p $r
{ nvidia-smi -L; nvidia-smi | grep -E 'Driver Version'; nproc; lscpu | sed -n 's/^Model name: *//p'; } > $r/machine.txt 2>&1
if [ "$1" = 1 ]; then
  timeout 90 bash .device/run.sh org.mori4j.transport.xgmi.GatherKernelProbe 0 200 > $r/probe-gather-kernel.txt 2>&1
  echo "probe rc $?" >> $r/probe-gather-kernel.txt
  MORI4J_CMD="$M" MORI4J_COMMIT=${COMMIT:-unknown} MORI4J_XGMI_MODES=same-process MORI4J_XGMI_RUNS="batch-4096-reversed batch-1024x16k-reversed" timeout 150 bash bench/record-xgmi-results.sh $r/xgmi > $r/xgmi.log 2>&1
  echo "xgmi rc $?" >> $r/xgmi.log
  timeout 100 bash .device/run.sh org.openjdk.jmh.Main XgmiBatchHostBenchmark -wi 3 -w 2 -i 5 -r 2 > $r/jmh-xgmi-batch-host.txt 2>&1
  echo "jmh rc $?" >> $r/jmh-xgmi-batch-host.txt
else
  timeout 40 bash .device/run.sh org.mori4j.transport.xgmi.GatherKernelProbe 0 200 > $r/probe-gather-kernel.txt 2>&1
  timeout 75 bash .device/run.sh org.openjdk.jmh.Main XgmiBatchHostBenchmark -wi 3 -w 2 -i 5 -r 2 > $r/jmh-xgmi-batch-host.txt 2>&1
  MORI4J_CMD="$M" MORI4J_COMMIT=${COMMIT:-unknown} MORI4J_XGMI_MODES=same-process MORI4J_XGMI_RUNS="write-256m lat-4k batch-4096-reversed" timeout 120 bash bench/record-xgmi-results.sh $r/xgmi > $r/xgmi.log 2>&1
  echo "xgmi rc $?" >> $r/xgmi.log
  mkdir -p $r/gpu-tcp; timeout 100 $M bench --mem-type gpu --compare-cpu --all --sweep-start-size 1M --sweep-max-size 4M --transfer-batch-size 1 --iters 200 --pingpong-iters 1000 --iperf-seconds 1 --json $r/gpu-tcp/run.json > $r/gpu-tcp.txt 2> $r/gpu-tcp.stderr
  echo "gpu-tcp rc $?" >> $r/gpu-tcp.txt
fi
cd $OUT && tar czf p2-part$1.tgz r && rm -rf r
