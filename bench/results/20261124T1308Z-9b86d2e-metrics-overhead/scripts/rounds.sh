#!/bin/bash
# Interleaved JMH forks: each round runs one fork of every variant, the order rotating from round to round.
set -u
cd /tmp/h5-jmh
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ROUNDS=${ROUNDS:-8}
variants=(off counters prometheus)
for r in $(seq 1 $ROUNDS); do
  for k in 0 1 2; do
    v=${variants[$(( (k + r) % 3 ))]}
    echo "round $r variant $v start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> out/log.txt
    $J --enable-native-access=ALL-UNNAMED -cp "mori4j-bench-0.1.0-SNAPSHOT.jar:lib/*" org.openjdk.jmh.Main MetricsOverheadBenchmark \
      -p metrics=$v -f 1 -wi 3 -w 2 -i 4 -r 2 -rf json -rff out/r$r-$v.json > out/r$r-$v.txt 2>&1
    echo "round $r variant $v rc $? end $(date -u +%H:%M:%S)" >> out/log.txt
  done
done
echo done >> out/log.txt
