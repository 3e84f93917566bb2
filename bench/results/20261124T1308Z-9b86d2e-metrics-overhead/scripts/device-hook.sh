#!/bin/bash
set -u
[ -x /tmp/r/jre/bin/java ] || { mkdir -p /tmp/r && tar -C /tmp/r -xJf .h5jmh/jre.tar.xz && tar -C /tmp/r -xJf .h5jmh/jmh.tar.xz; }
tar -C /tmp/r/jmh -xf .h5jmh/hook.tar
cd /tmp/r/jmh
/tmp/r/jre/bin/java --enable-native-access=ALL-UNNAMED -cp "hook:lib/*" org.openjdk.jmh.Main MetricsHookBenchmark -f 3 -wi 5 -w 1 -i 5 -r 1 -prof gc \
  -rf json -rff $OUT/hook.json > $OUT/hook.txt 2>&1
grep -A40 "^Benchmark  " $OUT/hook.txt | grep -v "gc.count\|gc.time\|alloc.rate "
