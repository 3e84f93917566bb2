#!/bin/bash
# gcab.sh OUT ROUNDS JARNAME op: 64 MiB rows, -Xlog:gc in both JVMs, with and without -XX:MetaspaceSize=128m, interleaved, each under the lock
O=$1; R=$2; J=$T4/jars/$3; OP=$4; mkdir -p $O
for r in $(seq 1 $R); do for v in plain ms; do
  X=""; [ $v = ms ] && X="-XX:MetaspaceSize=128m"
  flock /tmp/mori4j-build.lock env JAVA_TOOL_OPTIONS="$X -Xlog:gc:file=$O/gc-$v-r$r-%p.log:uptime" $T4/b.sh $J $O $v-r$r --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type $OP --no-baselines > /dev/null
done; done
python3 $T4/tab.py $O; for f in $O/gc-*.log; do echo "$(basename $f): $(grep -c Pause $f) pauses: $(grep Pause $f | sed 's/.*) //' | tr '\n' ';')"; done
