#!/usr/bin/env bash
# R4 (issue 15 target 6), device call 1 on 1x H100: (1) GpuTransferGpuTest (bytes) with the default staging memory and
# with MORI_IO_TCP_GPU_STAGING_MEMORY=registered; (2) StagingSocketProbe: loopback socket out of / into pinned
# (cuMemAllocHost), ordinary and registered (cuMemHostRegister) host memory, 1 MiB and 4 MiB; (3) GPU<->GPU writes and
# reads through bench/record-gpu-tcp-ratio.sh (each GPU row beside its CPU<->CPU row, interleaved rounds, staging trace)
# with staging memory pinned (base) and registered (reg), alternating run by run.
# RUN_SH, ROUNDS, ITERS, PROBE_ITERS, LIMIT and BENCH_WRAP (a dry run's bench command) may be overridden.
set -u
x=$OUT/x; mkdir -p "$x"
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
run_sh=${RUN_SH:-.device/run.sh}
limit=${LIMIT:-270}
cp .device/r4-git.txt "$x/git.txt" 2>/dev/null
tar tJf .device/classes.tar.xz 2>/dev/null | grep -c 'StagingMemory.class' > "$x/packed-staging-memory.txt"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  lscpu | grep -E 'Model name|Socket|NUMA node|L3|Thread|^CPU\(s\)'; uptime; } > "$x/machine.txt" 2>&1
# 1. bytes, default staging memory and registered
timeout 60 bash "$run_sh" --tests --include-tag gpu --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests.txt" 2>&1
echo "gpu-tests rc=$? at $(el) s" | tee -a "$x/timeline.txt"
MORI_IO_TCP_GPU_STAGING_MEMORY=registered timeout 60 bash "$run_sh" --tests --include-tag gpu \
  --include-classname '.*GpuTransferGpuTest' > "$x/gpu-tests-registered.txt" 2>&1
echo "gpu-tests-registered rc=$? at $(el) s" | tee -a "$x/timeline.txt"
# 2. the socket alone, per kind of host memory
dev=${PROBE_DEVICE:-0}
kinds=${PROBE_KINDS:-pinned,arena,registered}
timeout 40 bash "$run_sh" org.mori4j.bench.baseline.StagingSocketProbe --device "$dev" --kinds "$kinds" --size 1M \
  --iters "${PROBE_ITERS:-200}" --rounds 4 > "$x/probe-1m.txt" 2>&1
echo "probe-1m rc=$? at $(el) s" | tee -a "$x/timeline.txt"
timeout 30 bash "$run_sh" org.mori4j.bench.baseline.StagingSocketProbe --device "$dev" --kinds "$kinds" --size 4M \
  --iters "$(( ${PROBE_ITERS:-200} / 4 ))" --rounds 4 > "$x/probe-4m.txt" 2>&1
echo "probe-4m rc=$? at $(el) s" | tee -a "$x/timeline.txt"
# 3. the engine, pinned against registered staging memory, alternating
variant() { # name memory op rep
  local left=$(( limit - $(el) ))
  [ $left -lt 25 ] && { echo "skip $1-$3-$4 (left $left s)" >> "$x/timeline.txt"; return; }
  MORI_IO_TCP_GPU_STAGING_MEMORY=$2 OUT=$x/$1-$3-$4 TRACE=1 ROUNDS=${ROUNDS:-3} ITERS=${ITERS:-200} ONLY="^$3-gpu-gpu\$" \
    MORI4J_CMD="${BENCH_WRAP:-bash $run_sh org.mori4j.bench.Mori4jCommand}" \
    timeout $left bash bench/record-gpu-tcp-ratio.sh > "$x/$1-$3-$4.log" 2>&1
  echo "$1-$3-$4 rc=$? at $(el) s" | tee -a "$x/timeline.txt"
}
variant base pinned write 1
variant reg registered write 1
variant base pinned read 1
variant reg registered read 1
variant reg registered write 2
variant base pinned write 2
variant reg registered read 2
variant base pinned read 2
find "$x" -name 'trace-*' ! -name '*.summary.txt' -delete 2>/dev/null
grep -H -A4 "interleaved rounds" "$x"/*/*-gpu-gpu.txt > "$x/all-ratios.txt" 2>/dev/null
echo "done at $(el) s" >> "$x/timeline.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
