#!/usr/bin/env bash
set -u
export NCCL_NVLS_ENABLE=0 MORI_IO_TCP_GPU_STAGING_PREWARM=64
mkdir -p "$OUT/h6"
for m in everyDeviceFunctionOverEndpointsTwoPesInOneProcess everyDeviceFunctionOverGpuInitiatedEndpointsWithP2pDisabled; do
  s=$(date +%s)
  timeout 100 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname ".*$m.*" > "$OUT/h6/$m.log" 2>&1
  echo "$m (prewarm 64) rc=$? $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$OUT/h6/$m.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/h6/summary.txt"
done
