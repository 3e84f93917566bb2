#!/bin/bash
# one long-lived serve target per round, several bench JVMs against it: does a slow mode follow the target or the bench?
cd /tmp/t3; O=/tmp/t3/sticky; mkdir -p $O; J=/tmp/t3/jars/cnt
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java; F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
for s in 1 2 3; do
  $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar serve --buffer-size 64M --no-stdin-watch > $O/s$s.serve 2>&1 & SP=$!
  for i in $(seq 1 50); do grep -q MORI4J-READY $O/s$s.serve && break; sleep 0.2; done
  L=$(grep MORI4J-READY $O/s$s.serve); H=$(echo "$L" | sed 's/.*host=\([^ ]*\).*/\1/'); P=$(echo "$L" | sed 's/.*port=\([0-9]*\).*/\1/')
  for r in 1 2 3 4 5; do
    flock /tmp/mori4j-build.lock $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench --peer $H:$P --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write --no-baselines --json $O/s$s-b$r.json > $O/s$s-b$r.txt 2>&1
  done
  kill $SP; wait $SP 2>/dev/null
done
