#!/usr/bin/env bash
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT/h5"
for i in 1 2; do
  s=$(date +%s)
  timeout 60 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname '.*everyDeviceFunctionBetweenTwoPesInTwoProcesses.*' > "$OUT/h5/p2p-two-process-$i.log" 2>&1
  echo "p2p two processes run $i rc=$? $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$OUT/h5/p2p-two-process-$i.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/h5/summary.txt"
done
s=$(date +%s)
( sleep 14; for p in $(pgrep -f ConsoleLauncher); do kill -QUIT $p; done ) &
timeout 60 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname '.*everyDeviceFunctionOverEndpointsTwoPesInOneProcess.*' > "$OUT/h5/endpoints-one-process.log" 2>&1
echo "endpoints one process rc=$? $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$OUT/h5/endpoints-one-process.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/h5/summary.txt"
