#!/usr/bin/env bash
# K2: kv-bench layer streaming over TCP loopback (two JVMs) on the GPU host's CPUs. Usage: bash .device/k2-kv.sh TAG
set -u
tag=${1:-run}
o=${OUT:-/tmp/k2out}/$tag; mkdir -p "$o"
{ date -u; hostname; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'; uptime; free -g | head -2; } > "$o/machine.txt" 2>&1
for m in llama3-70b:30 llama3-8b:40; do
  model=${m%%:*}; it=${m##*:}
  uptime > "$o/load-$model.txt"
  timeout 140 bash .device/run.sh org.mori4j.bench.Mori4jCommand kv-bench --backend tcp --model $model --tokens 4096 --mode stream \
    --naive-iters 0 --iters $it --warmup 3 --json "$o/kv-stream-tcp-$model-4096.json" > "$o/kv-stream-tcp-$model-4096.txt" 2>&1
  echo "rc $?" >> "$o/load-$model.txt"; uptime >> "$o/load-$model.txt"
done
grep -h "stages\|exposed p50\|kv-bench:" "$o"/*.txt | cut -c1-600
