#!/usr/bin/env bash
# K4's second device call (1x H100, GPU 0 -> GPU 0, one process; says nothing about NVLink): the gpu-tagged
# KvBenchXgmiGpuTest and XgmiTransferGpuTest, then kv-bench Llama-3-70B 4,096 tokens fully scattered, push and pull,
# --warmup 30 --iters 20, unfused, A/B of -Dmori4j.xgmi.issue-poll-gap-ns (0 = every round polls, as always; 100000)
# with the timeline (worker time split) and without, interleaved, one untraced unfused JVM under JFR (1 ms samples), one
# fused. Usage on the device: bash <this>; RUN=echo prints the commands only. Writes $OUT/x/* and $OUT/x.tgz.
set -u
out=${OUT:-/tmp/k4-kv2}/x
mkdir -p "$out"
RUN=${RUN:-bash .device/run.sh}
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/machine.txt" 2>&1
: > "$out/rc.txt"
t0=$SECONDS
timeout 120 $RUN --tests --include-tag gpu --include-classname '.*KvBenchXgmiGpuTest' --include-classname '.*XgmiTransferGpuTest' > "$out/gpu-tests.log" 2>&1
echo "gpu-tests rc=$? secs=$((SECONDS - t0))" >> "$out/rc.txt"
kv() { # name, env assignments, --, extra kv-bench options
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ "$SECONDS" -gt "${STOP_AFTER:-230}" ]; then echo "$name skipped: $SECONDS s used" >> "$out/rc.txt"; return; fi
  local t0=$SECONDS
  env "${envs[@]}" timeout 45 $RUN org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi --xgmi-single-process --gpu-device 0 \
    --target-gpu-device 0 --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull --iters 20 --warmup 30 --naive-iters 0 \
    --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "$name rc=$? secs=$((SECONDS - t0))" >> "$out/rc.txt"
}
G=-Dmori4j.xgmi.issue-poll-gap-ns=100000
kv trace-unfused MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off --
kv trace-unfused-gap MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off DEVICE_JAVA_OPTS=$G -- --no-verify
kv unfused MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off -- --no-verify
kv unfused-gap MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off DEVICE_JAVA_OPTS=$G -- --no-verify
kv unfused-2 MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off MORI4J_KV_HOP_TRACE=1 -- --no-verify
kv unfused-gap-2 MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off DEVICE_JAVA_OPTS=$G --
kv unfused-jfr MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off \
  "DEVICE_JAVA_OPTS=-XX:StartFlightRecording=filename=$out/unfused.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.NativeMethodSample#period=1ms" -- --no-verify
kv fused MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=on -- --no-verify
grep -h "xgmi trace\|launches per\|caller thread\|^llama3\|hop trace" "$out"/*.log > "$out/summary.txt" 2>/dev/null
grep -E "tests (successful|failed|found)|containers failed" "$out/gpu-tests.log" >> "$out/rc.txt"
[ -n "${OUT:-}" ] && tar czf "$OUT/x.tgz" -C "$OUT" x
cat "$out/rc.txt"
