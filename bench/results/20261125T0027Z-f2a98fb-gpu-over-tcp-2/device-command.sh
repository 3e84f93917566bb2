#!/usr/bin/env bash
# R2 (issue 15 target 6): GPU memory over TCP vs CPU<->CPU on 1x H100, plus the gpu-tagged regression classes.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
cp .device/r2-git.txt "$x/git.txt" 2>/dev/null
# 1. regression classes (gpu tag), bounded
timeout 130 bash .device/run.sh --tests --include-tag gpu --include-classname '.*(GpuTransferGpuTest|ShmemDeviceApiGpuTest)' > "$x/gpu-tests.txt" 2>&1
echo "gpu-tests rc=$? at $(el) s" | tee -a "$x/timeline.txt"
# 2. the old folder's command, default staging (2 MiB chunk), with the staging trace
OUT=$x/chunk-2m TRACE=1 ROUNDS=5 timeout 115 bash bench/record-gpu-tcp-ratio.sh > "$x/chunk-2m.log" 2>&1
echo "chunk-2m rc=$? at $(el) s" | tee -a "$x/timeline.txt"
# 3. smaller staging buffers (so smaller pieces, a smaller staging footprint), GPU<->GPU only, while time is left
for c in 256KiB 128KiB; do
  left=$(( 285 - $(el) )); [ $left -lt 30 ] && { echo "skip $c (left $left s)" >> "$x/timeline.txt"; continue; }
  MORI_IO_TCP_GPU_STAGING_CHUNK=$c OUT=$x/chunk-$c ROUNDS=5 ONLY='write-gpu-gpu|read-gpu-gpu' timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/chunk-$c.log" 2>&1
  echo "chunk-$c rc=$? at $(el) s" | tee -a "$x/timeline.txt"
done
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
tar czf "$OUT/x.tgz" -C "$OUT" x
