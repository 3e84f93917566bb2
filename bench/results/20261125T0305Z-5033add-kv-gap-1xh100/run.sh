#!/usr/bin/env bash
# The one device call of kv-gap (1x H100): kv-bench Llama-3-70B, 4,096 tokens, fully scattered, GPU 0 -> GPU 0 in one
# process, with the XGMI timeline (MORI4J_XGMI_TRACE=1) in every run but the last, A/B over fuse-batches, events,
# streams and the block table's place. Usage on the device: bash <this> [runner]; RUN=echo prints the commands only.
set -u
out=${OUT:-/tmp/kv-gap}/x
mkdir -p "$out"
RUN=${RUN:-bash .device/run.sh}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/gpus.txt" 2>&1
kv() { # name, then env assignments, then -- and extra kv-bench options
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ "$SECONDS" -gt 140 ]; then echo "$name skipped: $SECONDS s used" >> "$out/rc.txt"; return; fi
  local t0=$SECONDS
  env "${envs[@]}" timeout 45 $RUN org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi --xgmi-single-process --gpu-device 0 \
    --target-gpu-device 0 --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull --iters 20 --warmup 3 --naive-iters 0 \
    --json "$out/$name.json" "$@" > "$out/$name.log" 2>&1
  echo "$name rc=$? secs=$((SECONDS - t0))" >> "$out/rc.txt"
}
kv A-unfused-trace MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off --
kv B-fused-trace MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=on -- --no-verify
kv F-unfused-notrace MORI4J_XGMI_TRACE=0 MORI_IO_XGMI_FUSE_BATCHES=off -- --no-verify
kv C-unfused-events256 MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off -- --no-verify --xgmi-events 256
kv D-unfused-streams8 MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off -- --no-verify --xgmi-events 256 --xgmi-streams 8
kv E-fused-devtable MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=on MORI_IO_XGMI_BLOCK_TABLE=device -- --no-verify
kv G-unfused-stream1 MORI4J_XGMI_TRACE=1 MORI_IO_XGMI_FUSE_BATCHES=off -- --no-verify --xgmi-events 256 --xgmi-streams 1
grep -h "xgmi trace\|launches per\|^llama3" "$out"/*.log > "$out/summary.txt" 2>/dev/null
[ -n "${OUT:-}" ] && tar czf "$OUT/x.tgz" -C "$OUT" x
exit 0
