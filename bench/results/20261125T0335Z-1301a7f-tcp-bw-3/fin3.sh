#!/bin/bash
cd /tmp/t3
./ab.sh /tmp/t3/fin3-d128 4 "cnt-head:X=1" "base-prev:X=1" -- --no-baselines > fin3-d128.out 2>&1
./ab.sh /tmp/t3/fin3-4k 1 "cnt-w:X=1" -- --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000 --op-type write > /dev/null 2>&1
./ab.sh /tmp/t3/fin3-4k 1 "cnt-r:X=1" -- --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000 --op-type read > /dev/null 2>&1
