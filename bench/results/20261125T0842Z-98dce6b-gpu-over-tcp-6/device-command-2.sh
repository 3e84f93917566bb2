#!/usr/bin/env bash
# R6 (issue 15 target 6), second device call on 1x H100: (1) GpuTransferGpuTest (bytes) with
# MORI_IO_TCP_GPU_STAGING_EARLY_REFILL=on; (2) GPU<->GPU writes through bench/record-gpu-tcp-ratio.sh with both traces
# (staging timeline, socket-call counts), base (early refill off) against early (on), alternated 3 x 2; (3) the bare
# socket out of / into pinned memory (StagingSocketProbe, pinned only) in the same call, for the write rate; (4) reads
# base/early; (5) early with the poller's yield stretched to 200us (MORI_IO_POLLER_YIELD) against early, to see what the
# initiator's sleep before the response costs; (6) early GPU -> CPU target. As time allows, in that order.
# RUN_SH, ROUNDS, ITERS, LIMIT and BENCH_WRAP (a dry run's bench command) may be overridden.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-280}
bench_cmd=${BENCH_WRAP:-bash $run_sh org.mori4j.bench.Mori4jCommand}
cp .device/r6-git.txt "$x/git.txt" 2>/dev/null
tar -xJOf .device/classes.tar.xz --wildcards '*/org/mori4j/transport/StagingTuning.class' 2>/dev/null | grep -c earlyRefill > "$x/packed-early-refill.txt"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  lscpu | grep -E 'Model name|Socket|NUMA node|L3|Thread|^CPU\(s\)'; uptime; } > "$x/machine.txt" 2>&1
MORI_IO_TCP_GPU_STAGING_EARLY_REFILL=on timeout 50 bash "$run_sh" --tests --include-tag gpu \
  --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests-early.txt" 2>&1
echo "gpu-tests-early rc=$? at $(el) s" | tee -a "$x/timeline.txt"
variant() { # name early-refill run rep [extra env]
  local left=$(( limit - $(el) ))
  [ $left -lt 30 ] && { echo "skip $1-$3-$4 (left $left s)" >> "$x/timeline.txt"; return; }
  env ${5:-} MORI_IO_TCP_GPU_STAGING_EARLY_REFILL=$2 OUT=$x/$1-$3-$4 TRACE=1 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-200} ONLY="^$3\$" \
    MORI4J_CMD="$bench_cmd" timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$1-$3-$4.log" 2>&1
  echo "$1-$3-$4 rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
variant base off write-gpu-gpu 1
variant early on write-gpu-gpu 1
variant early on write-gpu-gpu 2
variant base off write-gpu-gpu 2
variant base off write-gpu-gpu 3
variant early on write-gpu-gpu 3
left=$(( limit - $(el) ))
if [ $left -ge 50 ]; then
  timeout 30 bash "$run_sh" org.mori4j.bench.baseline.StagingSocketProbe --device 0 --kinds pinned --size 1M \
    --iters 200 --rounds 4 > "$x/probe-1m.txt" 2>&1
  echo "probe-1m rc=$? at $(el) s" | tee -a "$x/timeline.txt"
fi
variant base off read-gpu-gpu 1
variant early on read-gpu-gpu 1
variant yield on write-gpu-gpu 1 MORI_IO_POLLER_YIELD=200us
variant early on write-gpu-gpu 4
variant early on write-gpu-cpu 1
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/ratios.txt > "$x/all-ratios.txt" 2>/dev/null
echo "done at $(el) s" >> "$x/timeline.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
