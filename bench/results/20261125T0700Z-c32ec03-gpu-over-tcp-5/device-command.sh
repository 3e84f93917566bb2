#!/usr/bin/env bash
# R5 (issue 15 target 6), one device call on 1x H100: (1) GpuTransferGpuTest (bytes) with
# MORI_IO_TCP_GPU_STAGING_SCATTER=on; (2) GPU<->GPU writes and reads through bench/record-gpu-tcp-ratio.sh (each GPU
# row beside its CPU<->CPU row, interleaved rounds, staging trace) with one socket read per piece (base, scatter off)
# and scattering reads into the free staging buffers (scatter, on), alternating run by run; gather stays on (default).
# RUN_SH, ROUNDS, ITERS, LIMIT and BENCH_WRAP (a dry run's bench command) may be overridden.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-270}
cp .device/r5-git.txt "$x/git.txt" 2>/dev/null
# 1 when the packed classes know the setting (StagingTuning.scatterPieces)
tar -xJOf .device/classes.tar.xz --wildcards '*/org/mori4j/transport/StagingTuning.class' 2>/dev/null | grep -c scatterPieces > "$x/packed-scatter.txt"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  lscpu | grep -E 'Model name|Socket|NUMA node|L3|Thread|^CPU\(s\)'; uptime; } > "$x/machine.txt" 2>&1
MORI_IO_TCP_GPU_STAGING_SCATTER=on timeout 60 bash "$run_sh" --tests --include-tag gpu \
  --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests-scatter.txt" 2>&1
echo "gpu-tests-scatter rc=$? at $(el) s" | tee -a "$x/timeline.txt"
variant() { # name scatter op rep
  local left=$(( limit - $(el) ))
  [ $left -lt 25 ] && { echo "skip $1-$3-$4 (left $left s)" >> "$x/timeline.txt"; return; }
  MORI_IO_TCP_GPU_STAGING_SCATTER=$2 OUT=$x/$1-$3-$4 TRACE=1 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-200} ONLY="^$3-gpu-gpu\$" \
    MORI4J_CMD="${BENCH_WRAP:-bash $run_sh org.mori4j.bench.Mori4jCommand}" \
    timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$1-$3-$4.log" 2>&1
  echo "$1-$3-$4 rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
variant base off write 1
variant scatter on write 1
variant base off read 1
variant scatter on read 1
variant scatter on write 2
variant base off write 2
variant scatter on read 2
variant base off read 2
variant base off write 3
variant scatter on write 3
variant base off read 3
variant scatter on read 3
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/*-gpu-gpu.txt > "$x/all-ratios.txt" 2>/dev/null
echo "done at $(el) s" >> "$x/timeline.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
