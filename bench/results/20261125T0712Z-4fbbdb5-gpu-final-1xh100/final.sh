#!/usr/bin/env bash
# coordinator's final call, session 13: every gpu-tagged class, the example, then kv-bench push with the landing board on/off alternated
set -u
o=$OUT/x; mkdir -p $o
OUT=$o/gpu PER_CLASS_S=100 bash bench/run-gpu-tests.sh > $o/run.log 2>&1
: > $o/kv-rc.txt
for i in 1 2; do for b in on off; do
  s=$SECONDS
  MORI4J_KV_LANDING_BOARD=$b MORI_IO_XGMI_FUSE_BATCHES=off timeout 60 bash .device/run.sh org.mori4j.bench.Mori4jCommand kv-bench --backend xgmi --xgmi-single-process --gpu-device 0 \
    --target-gpu-device 0 --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull --iters 20 --warmup 30 --naive-iters 0 --no-verify \
    --json $o/kv-board-$b-$i.json > $o/kv-board-$b-$i.log 2>&1
  echo "board=$b run=$i rc=$? secs=$((SECONDS - s))" >> $o/kv-rc.txt
done; done
grep -h "^llama3\|caller thread" $o/kv-board-*.log > $o/kv-summary.txt 2>/dev/null
cd $OUT && tar czf final.tgz x
