#!/bin/bash
# js.sh OUT: serve target + bench --peer 64 MiB write; 30 jstacks of both JVMs during the measured phase; scheduler threads' stacks kept
O=$1; mkdir -p $O; J=$T4/jars/il
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java; F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
$JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar serve --buffer-size 64M --no-stdin-watch > $O/serve.out 2>&1 & SP=$!
for i in $(seq 1 100); do grep -q MORI4J-READY $O/serve.out && break; sleep 0.2; done
L=$(grep MORI4J-READY $O/serve.out); H=$(echo "$L" | sed 's/.*host=\([^ ]*\).*/\1/'); P=$(echo "$L" | sed 's/.*port=\([0-9]*\).*/\1/')
$JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench --peer $H:$P --buffer-size 64M --transfer-batch-size 1 --iters 400 --warmup-iters 5 --op-type write --no-baselines > $O/bench.out 2>&1 & BP=$!
sleep 5
for i in $(seq 1 30); do /usr/lib/jvm/temurin-25-jdk-amd64/bin/jstack $SP > $O/t$i.txt 2>/dev/null; /usr/lib/jvm/temurin-25-jdk-amd64/bin/jstack $BP > $O/b$i.txt 2>/dev/null; sleep 0.05; done
wait $BP; kill $SP; wait $SP 2>/dev/null
