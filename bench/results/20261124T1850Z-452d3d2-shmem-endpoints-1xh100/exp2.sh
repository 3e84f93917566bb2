#!/usr/bin/env bash
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
export MORI4J_SHMEM_DEVICE_WAIT_TIMEOUT=${WT:-25s}
run_one() { # name, env...
  local name=$1; shift
  local log="$OUT/$name.log"
  local s=$(date +%s)
  env "$@" timeout 150 bash .device/run.sh --tests --include-tag gpu --include-classname '^org\.mori4j\.shmem\.ShmemDeviceApiGpuTest$' --include-methodname '.*OverEndpointsTwoPesInOneProcess.*' > "$log" 2>&1 &
  local bg=$!
  ( for i in $(seq 1 120); do sleep 1; if grep -q "no progress from" "$log" 2>/dev/null; then for pid in $(pgrep -f ConsoleLauncher); do kill -QUIT $pid; done; nvidia-smi > "$OUT/smi-$name.txt" 2>&1; break; fi; done ) &
  local wd=$!
  wait $bg; local rc=$?
  kill $wd 2>/dev/null
  echo "$name rc=$rc $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed)' "$log" | tr -s ' ' | tr '\n' ' ') $(grep -o 'device-api-proxy-one-process:.*' "$log")" | tee -a "$OUT/summary.txt"
}
run_one eager-conn32-p8 MORI_IO_TCP_GPU_STAGING_PREWARM=8 CUDA_DEVICE_MAX_CONNECTIONS=32 CUDA_MODULE_LOADING=EAGER
run_one p8 MORI_IO_TCP_GPU_STAGING_PREWARM=8
