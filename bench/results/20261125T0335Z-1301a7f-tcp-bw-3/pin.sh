#!/bin/bash
# 4 KiB session write against a separate serve: pinned (target on cpu1, bench on cpu0) vs not, interleaved, under the lock
cd /tmp/t3
for r in 1 2 3 4 5 6 7; do
  flock /tmp/mori4j-build.lock env TST="taskset -c 1" TSI="taskset -c 0" ./ps2.sh /tmp/t3/jars/bulk /tmp/t3/pin pin-r$r X=1 X=1 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write
  flock /tmp/mori4j-build.lock env TST= TSI= ./ps2.sh /tmp/t3/jars/bulk /tmp/t3/pin free-r$r X=1 X=1 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write
done
