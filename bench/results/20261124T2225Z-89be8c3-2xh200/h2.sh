#!/usr/bin/env bash
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT/h2"
for m in everyDeviceFunctionOverGpuInitiatedEndpointsWithP2pDisabled everyDeviceFunctionBetweenTwoPesInTwoProcesses everyDeviceFunctionOverEndpointsTwoPesInOneProcess structArgumentsOccupancyAndCooperativeLaunch; do
  s=$(date +%s)
  timeout 110 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname ".*$m.*" > "$OUT/h2/$m.log" 2>&1
  echo "$m rc=$? $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$OUT/h2/$m.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/h2/summary.txt"
done
s=$(date +%s)
MORI4J_KV_HOP_TRACE=1 timeout 170 bash .device/run.sh org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi --gpu-device 0 --target-gpu-device 1 --xgmi-single-process \
  --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull,stream --json "$OUT/h2/kv-70b-single.json" > "$OUT/h2/kv-70b-single.log" 2>&1
echo "kv 70b single rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/h2/summary.txt"
nvidia-smi topo -m > "$OUT/h2/topo.txt" 2>&1
