#!/bin/bash
# 4 KiB session write, long runs with the thread sampler; each run under the build lock
for r in 1 2 3 4 5 6; do
  flock /tmp/mori4j-build.lock /tmp/t3/sb.sh /tmp/t3/jars/bulk /tmp/t3/slow w$r --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 100000 --warmup-iters 1000 --op-type write --no-baselines > /dev/null
done
