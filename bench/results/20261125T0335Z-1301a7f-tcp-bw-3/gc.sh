#!/bin/bash
cd /tmp/t3; mkdir -p gc
flock /tmp/mori4j-build.lock env JAVA_TOOL_OPTIONS="-Xlog:gc*:file=/tmp/t3/gc/gc-%p.log:uptime" MORI_IO_TCP_BULK_LANES=1 ./b.sh /tmp/t3/jars/cnt /tmp/t3/gc w1 --buffer-size 64M --transfer-batch-size 1 --iters 100 --warmup-iters 5 --op-type write --no-baselines > /dev/null
