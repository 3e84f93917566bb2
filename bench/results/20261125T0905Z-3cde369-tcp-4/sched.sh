#!/bin/bash
# sched.sh OUT NAME: 64 MiB write, 200 iterations, iteration log; perf sched record -a for 4 s from the measured phase
O=$1; N=$2; mkdir -p $O; J=$T4/jars/il
( MORI4J_BENCH_ITERATION_LOG=$O/$N.iter JAVA_TOOL_OPTIONS="-Xlog:gc:file=$O/gc-$N-%p.log:time" $T4/b.sh $J $O $N --buffer-size 64M --transfer-batch-size 1 --iters 300 --warmup-iters 5 --op-type write --no-baselines > /dev/null ) &
BP=$!
for i in $(seq 1 200); do grep -q "64 MiB\|warm" $O/$N.txt 2>/dev/null && break; sleep 0.1; done
sleep 4.5
perf sched record -a -o $O/$N.sched -- sleep 3 > /dev/null 2>&1
date +%s.%N > $O/$N.schedend
wait $BP
