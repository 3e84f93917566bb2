#!/usr/bin/env bash
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT/h3"
s=$(date +%s)
MORI4J_KV_HOP_TRACE=1 timeout 150 bash .device/run.sh org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi --gpu-device 0 --target-gpu-device 1 \
  --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull,stream --json "$OUT/h3/kv-70b-two.json" > "$OUT/h3/kv-70b-two.log" 2>&1
echo "kv 70b two-process rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/h3/summary.txt"
s=$(date +%s)
timeout 120 bash .device/run.sh org.mori4j.bench.Mori4jCommand xgmi-pairs --gpus 0,1 --single-process --iters 30 --warmup-iters 5 \
  --machine "2x H200, CUDA 13" --json "$OUT/h3/xgmi-pairs-0-1.json" > "$OUT/h3/xgmi-pairs-0-1.log" 2>&1
echo "xgmi-pairs 0,1 single-process rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/h3/summary.txt"
