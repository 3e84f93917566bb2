#!/bin/bash
# ps.sh JARDIR OUTDIR NAME "TARGET_ENV" "INIT_ENV" bench-args: a 'serve' target with its own env, bench --peer at it
J=$1; O=$2; N=$3; TE=$4; IE=$5; shift 5; mkdir -p $O
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java; F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
env $TE $TST $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar serve --buffer-size 64M --no-stdin-watch > $O/$N.serve 2>&1 & SP=$!
for i in $(seq 1 100); do grep -q MORI4J-READY $O/$N.serve && break; sleep 0.2; done
L=$(grep MORI4J-READY $O/$N.serve); H=$(echo "$L" | sed 's/.*host=\([^ ]*\).*/\1/'); P=$(echo "$L" | sed 's/.*port=\([0-9]*\).*/\1/')
echo "== $N $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) target env: $TE init env: $IE" >> $O/load.txt
env $IE /usr/bin/time -f "cpu user %U sys %S wall %e" -o $O/$N.time $TSI $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench --peer $H:$P "$@" --no-baselines --json $O/$N.json > $O/$N.txt 2>&1
echo "rc=$? $(cat $O/$N.time)" >> $O/load.txt
kill $SP; wait $SP 2>/dev/null
