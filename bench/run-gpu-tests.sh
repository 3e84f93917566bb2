#!/usr/bin/env bash
# On the GPU machine, from the checkout's root after bash bench/device-pack.sh (../shared/device/pack.sh with the classes archived): every gpu-tagged class in its own JVM
# (a trapped kernel poisons a process's CUDA context), then the GPU-initiated example, then with EXTRA=shmem
# shmem-bench with 4 and 8 PEs (on one GPU: the N-PE code paths). Logs and summary.txt under $OUT.
# Env: CLASSES (space-separated class names; default all), PER_CLASS_S (150), SKIP_EXTRA (no example), EXTRA=shmem,
# SHMEM_S (200), SHMEM_MAX (16M).
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
nvidia-smi topo -m >> "$OUT/gpu.txt" 2>&1
classes=${CLASSES:-"org.mori4j.io.gpuinit.GpuInitiatedGpuTest org.mori4j.io.gpuinit.GpuInitiatedTwoJvmGpuTest org.mori4j.shmem.ShmemDeviceApiGpuTest org.mori4j.shmem.collectives.ShmemCollectivesProxyGpuTest org.mori4j.shmem.collectives.ShmemCollectivesGpuTest org.mori4j.natives.cuda.CudaRuntimeGpuTest org.mori4j.natives.nccl.NcclGpuTest org.mori4j.io.GpuTransferGpuTest org.mori4j.io.RdmaGpuMemoryGpuTest org.mori4j.io.XgmiTransferGpuTest org.mori4j.bench.BenchGpuEndToEndTest org.mori4j.bench.XgmiBenchGpuTest org.mori4j.bench.kv.KvBenchXgmiGpuTest org.mori4j.examples.ExamplesRunTest"}
for c in $classes; do
  s=$(date +%s)
  timeout ${PER_CLASS_S:-150} bash .device/run.sh --tests --include-tag gpu --include-classname "^${c//./\\.}$" > "$OUT/test-$c.log" 2>&1
  rc=$?
  echo "$c rc=$rc $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed|aborted|skipped)' "$OUT/test-$c.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
done
if [ -z "${SKIP_EXTRA:-}" ]; then
  s=$(date +%s); timeout 120 bash .device/run.sh org.mori4j.examples.GpuInitiatedWrite > "$OUT/example-GpuInitiatedWrite.log" 2>&1
  echo "example GpuInitiatedWrite rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/summary.txt"
fi
if [ "${EXTRA:-}" = shmem ]; then
  for np in 4 8; do
    s=$(date +%s)
    timeout ${SHMEM_S:-200} bash .device/run.sh org.mori4j.bench.Mori4jCommand shmem-bench --np $np --max-size ${SHMEM_MAX:-16M} --iters 100 \
      --machine "1x H100 80GB HBM3, CUDA 13 ($np PEs on one GPU)" --json "$OUT/shmem-bench-np$np.json" > "$OUT/shmem-bench-np$np.log" 2>&1
    echo "shmem-bench --np $np rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/summary.txt"
  done
fi
