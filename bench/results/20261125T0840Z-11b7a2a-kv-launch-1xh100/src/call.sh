#!/usr/bin/env bash
# K5's device call: kv-bench Llama-3-70B, 4,096 tokens, fully scattered, GPU0 -> GPU0 in one process (1x H100), push and
# pull, one JVM per configuration (name, then environment): traced rows give the worker's issue parts per launch and the
# caller's calls, untraced rows the figures to quote. Optional: RUN_TESTS=1 runs the two gpu-tagged KV/XGMI classes.
# Usage: bash src/call.sh OUTDIR CONFIG... where CONFIG is name:VAR=v,VAR=v (or name: for none)
set -uo pipefail
out=$1; shift
mkdir -p "$out"
. bench/gpu-machine-info.sh
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: ${MORI4J_COMMIT:-unknown}"; gpu_machine_info; } > "$out/machine.txt" 2>&1
: > "$out/rc.txt"
for c in "$@"; do
  name=${c%%:*}; envs=${c#*:}
  if [ "$SECONDS" -gt "${STOP_AFTER:-200}" ]; then echo "$name not run: $SECONDS s used" >> "$out/rc.txt"; continue; fi
  t0=$SECONDS
  env $(echo "$envs" | tr ',' ' ') timeout 60 ${MORI4J_CMD:-bash .device/run.sh} org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi \
    --xgmi-single-process --gpu-device 0 --target-gpu-device 0 --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull \
    --iters "${KV_ITERS:-20}" --warmup "${KV_WARMUP:-30}" --naive-iters 0 --json "$out/$name.json" > "$out/$name.log" 2>&1
  echo "$name rc=$? secs=$((SECONDS - t0)) env=$envs" >> "$out/rc.txt"
done
grep -H "xgmi trace\|launches per\|^llama3" "$out"/*.log > "$out/summary.txt" 2>/dev/null
if [ "${RUN_TESTS:-0}" = 1 ]; then
  t0=$SECONDS
  timeout 120 ${MORI4J_CMD:-bash .device/run.sh} --tests --include-tag gpu --include-classname '.*KvBenchXgmiGpuTest' --include-classname '.*XgmiTransferGpuTest' > "$out/gpu-tests.log" 2>&1
  echo "gpu-tests rc=$? secs=$((SECONDS - t0))" >> "$out/rc.txt"
fi
cat "$out/rc.txt"
