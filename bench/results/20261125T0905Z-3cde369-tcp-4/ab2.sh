#!/bin/bash
# ab2.sh OUTDIR ROUNDS "NAME:ENV..." ... -- bench args: as ab.sh, plus the iteration log and -Xlog:gc (time) of both JVMs per run
O=$1; R=$2; shift 2; V=(); while [ "$1" != "--" ]; do V+=("$1"); shift; done; shift; mkdir -p $O
for r in $(seq 1 $R); do for v in "${V[@]}"; do n=${v%%:*}; e=${v#*:}; J=$T4/jars/${n%%-*}
  flock /tmp/mori4j-build.lock env $e MORI4J_BENCH_ITERATION_LOG=$O/$n-r$r.iter JAVA_TOOL_OPTIONS="-Xlog:gc:file=$O/gc-$n-r$r-%p.log:time" $T4/b.sh $J $O $n-r$r "$@" >/dev/null; done; done
python3 $T4/cmp.py $O
