#!/usr/bin/env bash
# Session 15's last device call (1x H100): every gpu-tagged class (bench/run-gpu-tests.sh), then issue 15's one-GPU
# figures at this build: target 3's host part (JMH XgmiBatchHostBenchmark.toLaunch, "launch at", twice) and target 5's
# proxy (the XGMI 4 KiB session write beside its own JVM's raw 4 KiB copy + synchronize, GPU0 -> GPU0, three runs).
# Usage on the GPU machine, from the checkout with .device/ packed: bash bench/results/<this folder>/final.sh
set -u
mkdir -p "$OUT/g" "$OUT/x"
OUT=$OUT/g PER_CLASS_S=100 bash bench/run-gpu-tests.sh > "$OUT/g/run.txt" 2>&1
r=$OUT/x
{ date -u +%FT%TZ; nproc; lscpu | sed -n 's/^Model name: *//p'; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uptime; } > "$r/machine.txt" 2>&1
J=/tmp/devjre/jre/bin/java
cp=""; for c in .device/classes/*/classes; do cp="$cp:$c"; done; cp="${cp#:}:/tmp/devjre/lib/*"
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
for k in 1 2; do
  echo "== run $k" >> "$r/toLaunch.txt"
  timeout 45 $J $F -cp "$cp" org.openjdk.jmh.Main 'XgmiBatchHostBenchmark.toLaunch' -p runtime=cuda -wi 2 -w 1 -i 4 -r 1 >> "$r/toLaunch.txt" 2>&1
  echo "rc $?" >> "$r/toLaunch.txt"
done
for k in 1 2 3; do
  timeout 45 bash .device/run.sh org.mori4j.bench.Mori4jCommand bench --backend xgmi --gpu-device 0 --target-gpu-device 0 --xgmi-single-process \
    --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --json "$r/lat4k-$k.json" > "$r/lat4k-$k.txt" 2> "$r/lat4k-$k.stderr"
  echo "exit $?" >> "$r/lat4k-$k.txt"
done
uptime >> "$r/machine.txt"
cd "$OUT" && tar -cJf g.tar.xz g && tar -cJf x.tar.xz x
grep -h "rc=\|^example" g/summary.txt; grep -h "launch at\|toLaunch" x/toLaunch.txt | tail -8; grep -h "4 KiB\|x the raw\|exit" x/lat4k-*.txt | head -20
