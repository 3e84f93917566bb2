#!/usr/bin/env bash
# one-process shmem-over-endpoints stall: prewarm sizes, thread dumps
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
export MORI4J_SHMEM_DEVICE_WAIT_TIMEOUT=${WT:-25s}
for p in ${PREWARMS:-8 16}; do
  export MORI_IO_TCP_GPU_STAGING_PREWARM=$p
  log="$OUT/oneproc-prewarm$p.log"
  s=$(date +%s)
  timeout 150 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname '.*OverEndpointsTwoPesInOneProcess.*' > "$log" 2>&1 &
  bg=$!
  ( sleep ${DUMP_AT:-18}; for pid in $(pgrep -f ConsoleLauncher); do kill -QUIT $pid; done; sleep 1; nvidia-smi > "$OUT/smi-prewarm$p.txt" 2>&1 ) &
  wait $bg; rc=$?
  echo "prewarm=$p rc=$rc $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$log" | tr -s ' ' | tr '\n' ' ') $(grep -o 'device-api-proxy-one-process:.*' "$log")" | tee -a "$OUT/summary.txt"
done
