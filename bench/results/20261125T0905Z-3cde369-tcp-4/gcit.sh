#!/bin/bash
# gcit.sh OUT ROUNDS JARNAME op iters "v1:JAVAOPTS" "v2:JAVAOPTS"...: 64 MiB rows with GC logs (time) of both JVMs and the iteration log, interleaved, each under the lock
O=$1; R=$2; J=$T4/jars/$3; OP=$4; IT=$5; shift 5; mkdir -p $O
for r in $(seq 1 $R); do for v in "$@"; do n=${v%%:*}; X=${v#*:}
  flock /tmp/mori4j-build.lock env MORI4J_BENCH_ITERATION_LOG=$O/$n-r$r.iter JAVA_TOOL_OPTIONS="$X -Xlog:gc:file=$O/gc-$n-r$r-%p.log:time" $T4/b.sh $J $O $n-r$r --buffer-size 64M --transfer-batch-size 1 --iters $IT --warmup-iters 5 --op-type $OP --no-baselines > /dev/null
done; done
python3 $T4/tab.py $O; python3 $T4/gcalign.py $O
