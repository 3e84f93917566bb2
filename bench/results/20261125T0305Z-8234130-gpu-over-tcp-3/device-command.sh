#!/usr/bin/env bash
# R3 (issue 15 target 6), one device call on 1x H100: the gpu-tagged GpuTransferGpuTest (bytes), then GPU<->GPU
# writes and reads through bench/record-gpu-tcp-ratio.sh (each GPU row beside its CPU<->CPU row, interleaved rounds)
# for the staging before this change (MORI_IO_TCP_GPU_STAGING_PIECES=4, MORI_IO_TCP_GPU_COPY_SPIN=0) and after it
# (2 pieces, 30us spin), the two variants alternating run by run, with the staging trace of both JVMs.
# RUN_SH and ROUNDS/ITERS may be overridden for a dry run.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-168}
cp .device/r3-git.txt "$x/git.txt" 2>/dev/null
tar tJf .device/classes.tar.xz 2>/dev/null | grep -c 'StagingTuning.class' > "$x/packed-staging-tuning.txt"
# 1. bytes: GPU and CPU ends across two JVMs (gpu tag), bounded
timeout 60 bash "$run_sh" --tests --include-tag gpu --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests.txt" 2>&1
echo "gpu-tests rc=$? at $(el) s" | tee -a "$x/timeline.txt"
# 2. before/after, alternating; each run: ROUNDS interleaved GPU/CPU rounds per size
variant() { # name pieces spin op rep
  local left=$(( limit - $(el) ))
  [ $left -lt 20 ] && { echo "skip $1-$4-$5 (left $left s)" >> "$x/timeline.txt"; return; }
  MORI_IO_TCP_GPU_STAGING_PIECES=$2 MORI_IO_TCP_GPU_COPY_SPIN=$3 OUT=$x/$1-$4-$5 TRACE=1 ROUNDS=${ROUNDS:-3} \
    ITERS=${ITERS:-200} ONLY="^$4-gpu-gpu\$" MORI4J_CMD="bash $run_sh org.mori4j.bench.Mori4jCommand" \
    timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$1-$4-$5.log" 2>&1
  echo "$1-$4-$5 rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
variant base 4 0us write 1
variant new 2 30us write 1
variant base 4 0us read 1
variant new 2 30us read 1
variant new 2 30us write 2
variant base 4 0us write 2
variant new 2 30us read 2
variant base 4 0us read 2
variant spin 4 30us write 1
variant pieces 2 0us write 1
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/*-gpu-gpu.txt > "$x/all-ratios.txt" 2>/dev/null
tar czf "$OUT/x.tgz" -C "$OUT" x
echo "done at $(el) s" >> "$x/timeline.txt"
