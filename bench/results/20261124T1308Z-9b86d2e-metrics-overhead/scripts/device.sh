#!/bin/bash
# MetricsOverheadBenchmark on the device machine's CPUs (the GPU is not used): interleaved forks, rotating order.
set -u
mkdir -p /tmp/r && tar -C /tmp/r -xJf .h5jmh/jre.tar.xz && tar -C /tmp/r -xJf .h5jmh/jmh.tar.xz
cd /tmp/r/jmh
J=/tmp/r/jre/bin/java
{ nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2; cat /proc/loadavg; $J -version 2>&1; } > $OUT/machine.txt
variants=(off counters prometheus)
for r in $(seq 1 ${ROUNDS:-6}); do
  for k in 0 1 2; do
    v=${variants[$(( (k + r) % 3 ))]}
    echo "round $r variant $v start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/log.txt
    $J --enable-native-access=ALL-UNNAMED -cp "mori4j-bench-0.1.0-SNAPSHOT.jar:lib/*" org.openjdk.jmh.Main MetricsOverheadBenchmark \
      -p metrics=$v -f 1 -wi 3 -w 2 -i 4 -r 2 -rf json -rff /tmp/r/r$r-$v.json > /tmp/r/r$r-$v.txt 2>&1
    echo "round $r variant $v rc $? end $(date -u +%H:%M:%S)" >> $OUT/log.txt
    grep -E "^Iteration|sessionWrite4k " /tmp/r/r$r-$v.txt | sed "s/^/r$r $v: /" >> $OUT/iterations.txt
  done
done
cd /tmp/r && tar -cf $OUT/json.tar r*-*.json
