#!/usr/bin/env bash
# Issue 15 target 6: GPU memory over TCP against CPU<->CPU, 1-4 MiB, the two series interleaved in one run
# (bench --compare-cpu --compare-cpu-rounds), for GPU<->GPU writes and reads and the two mixed-end writes (which end's
# staging costs what). With TRACE set (MORI4J_TCP_GPU_STAGE_TRACE for both JVMs), they also write their staging timelines.
# Usage: OUT=dir [MORI4J_CMD=...] [ROUNDS=5] [ITERS=200] [ONLY=regex of run names] [TRACE=1] bench/record-gpu-tcp-ratio.sh
# With TRACE set, both JVMs also count each transfer's socket calls, CPU and GPU rows alike (TcpCallTrace:
# calls-NAME.PID.tcp-calls.txt, summaries only).
# Staging settings reach both JVMs through the environment (the child target inherits it), so an A/B sets them per
# invocation, e.g. MORI_IO_TCP_GPU_STAGING_PIECES=2 MORI_IO_TCP_GPU_COPY_SPIN=30us (bench/results/*-gpu-over-tcp-3).
set -uo pipefail
out=${OUT:?set OUT to the output folder}
cmd=${MORI4J_CMD:-bash .device/run.sh org.mori4j.bench.Mori4jCommand}
rounds=${ROUNDS:-5}
iters=${ITERS:-200}
mkdir -p "$out"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; nproc; uptime; } > "$out/machine.txt" 2>&1
rc=0
run() { # name, bench flags...
  local name=$1; shift
  [[ -n "${ONLY:-}" && ! $name =~ ${ONLY} ]] && return
  echo "== $name: bench $*" | tee -a "$out/commands.txt"
  MORI4J_TCP_GPU_STAGE_TRACE=${TRACE:+$out/trace-$name} MORI4J_TCP_CALL_TRACE=${TRACE:+$out/calls-$name} $cmd bench --compare-cpu --compare-cpu-rounds "$rounds" --all \
    --sweep-start-size 1M --sweep-max-size 4M --transfer-batch-size 1 --iters "$iters" --warmup-iters 20 --warmup-ms 200 \
    --no-baselines "$@" > "$out/$name.txt" 2> "$out/$name.err" || { echo "$name exit $?" >> "$out/commands.txt"; rc=1; }
  grep -A4 "interleaved rounds" "$out/$name.txt" | tee -a "$out/ratios.txt"
  # each JVM's trace file holds its summary, then every raw record: keep the summary apart (small enough to bring back)
  for f in "$out"/trace-"$name".*.gpu-stage.txt; do
    [[ -f $f ]] && sed '/^# raw records/,$d' "$f" > "${f%.txt}.summary.txt"
  done
}
run write-gpu-gpu --mem-type gpu --op-type write
run read-gpu-gpu --mem-type gpu --op-type read
run write-gpu-cpu --mem-type gpu --target-mem-type cpu --op-type write
run write-cpu-gpu --mem-type cpu --target-mem-type gpu --op-type write
exit $rc
