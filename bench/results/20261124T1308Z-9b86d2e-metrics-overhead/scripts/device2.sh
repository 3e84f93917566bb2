#!/bin/bash
# 1) MetricsHookBenchmark, 2) MetricsOverheadBenchmark in rotating rounds, both with the rebuilt engine-actors jar first.
set -u
[ -x /tmp/r/jre/bin/java ] || { mkdir -p /tmp/r && tar -C /tmp/r -xJf .h5jmh/jre.tar.xz && tar -C /tmp/r -xJf .h5jmh/jmh.tar.xz; }
cp .h5jmh/engine-actors-new.jar /tmp/r/jmh/ && tar -C /tmp/r/jmh -xf .h5jmh/hook.tar
cd /tmp/r/jmh
J=/tmp/r/jre/bin/java
CP="engine-actors-new.jar:lib/*"
{ nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; } > $OUT/machine2.txt
$J --enable-native-access=ALL-UNNAMED -cp "hook:$CP" org.openjdk.jmh.Main MetricsHookBenchmark -f 3 -wi 5 -w 1 -i 5 -r 1 -prof gc -rf json -rff $OUT/hook2.json > $OUT/hook2.txt 2>&1
variants=(off counters prometheus)
rm -f /tmp/r/r*-*.json
for r in $(seq 1 ${ROUNDS:-6}); do
  for k in 0 1 2; do
    v=${variants[$(( (k + r) % 3 ))]}
    echo "round $r variant $v start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/log2.txt
    $J --enable-native-access=ALL-UNNAMED -cp "mori4j-bench-0.1.0-SNAPSHOT.jar:$CP" org.openjdk.jmh.Main MetricsOverheadBenchmark \
      -p metrics=$v -f 1 -wi 3 -w 2 -i 4 -r 2 -rf json -rff /tmp/r/r$r-$v.json > /tmp/r/r$r-$v.txt 2>&1
    echo "round $r variant $v rc $? end $(date -u +%H:%M:%S)" >> $OUT/log2.txt
  done
done
cd /tmp/r && tar -cf $OUT/json2.tar r*-*.json
grep -A40 "^Benchmark  " $OUT/hook2.txt | grep -v "gc.count\|gc.time\|alloc.rate "
