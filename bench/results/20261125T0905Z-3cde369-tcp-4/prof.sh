#!/bin/bash
# prof.sh JARDIR OUTDIR NAME SECONDS bench-args: serve target + bench --peer; after 8 s, perf stat syscalls per thread of both, then strace -c briefly
J=$1; O=$2; N=$3; S=$4; shift 4; mkdir -p $O
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java; F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
$JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar serve --buffer-size 64M --no-stdin-watch > $O/$N.serve 2>&1 & SP=$!
for i in $(seq 1 100); do grep -q MORI4J-READY $O/$N.serve && break; sleep 0.2; done
L=$(grep MORI4J-READY $O/$N.serve); H=$(echo "$L" | sed 's/.*host=\([^ ]*\).*/\1/'); P=$(echo "$L" | sed 's/.*port=\([0-9]*\).*/\1/')
$JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench --peer $H:$P "$@" --no-baselines --json $O/$N.json > $O/$N.txt 2>&1 & BP=$!
sleep 8
perf stat --per-thread -e raw_syscalls:sys_enter,context-switches,cpu-migrations -p $SP -o $O/$N.tstat -- sleep $S & P1=$!
perf stat --per-thread -e raw_syscalls:sys_enter,context-switches,cpu-migrations -p $BP -o $O/$N.bstat -- sleep $S & P2=$!
wait $P1 $P2; sleep 0.5
perf record -o $O/$N.perf.data -a -g -- sleep 2 >/dev/null 2>&1
wait $BP; kill $SP; wait $SP 2>/dev/null
