#!/bin/bash
cd /tmp/t3
for r in 1 2 3 4 5 6 7 8; do
  flock /tmp/mori4j-build.lock ./b.sh /tmp/t3/jars/cnt /tmp/t3/cnt w$r --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write --no-baselines > /dev/null
done
