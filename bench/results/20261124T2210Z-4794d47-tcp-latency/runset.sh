#!/bin/bash
# usage: runset.sh JARDIR OUTDIR TAG ; one pass: 4 KiB session write and read under three TCP latency settings, each
# bench run with its baselines (NIO ping-pong, UCX tag_lat/tag_bw over tcp,self on lo, iperf3) in the same run; then
# the default row (128 x 4 KiB) under each. Before each run: the load average and the busiest processes; after it,
# the CPU seconds (user+sys) of both JVMs (the bench reaps its child target).
J=$1; O=$2; T=$3; mkdir -p $O
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
b() { name=$1; shift
  { echo "== $T-$name $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) caller-drive=$MORI_IO_TCP_CALLER_DRIVE serve-spin=$MORI_IO_TCP_SERVE_SPIN"
    ps -eo pcpu,comm --sort=-pcpu | sed -n 2,3p | tr '\n' ';'; echo; } >> $O/load.txt
  /usr/bin/time -f "cpu user %U sys %S wall %e" -o $O/$T-$name.time $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench "$@" --json $O/$T-$name.json > $O/$T-$name.txt 2> $O/$T-$name.err
  echo "rc=$? $T-$name $(cat $O/$T-$name.time)" >> $O/load.txt; }
S="--buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000"
run3() { # name-suffix args...
  MORI_IO_TCP_CALLER_DRIVE=off MORI_IO_TCP_SERVE_SPIN=0us b off-$1 "${@:2}"
  MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_SERVE_SPIN=0us b on-$1 "${@:2}"
  MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_SERVE_SPIN=50us b onss50-$1 "${@:2}"
}
for op in write read; do run3 4k-$op $S --op-type $op; done
run3 128x4k --no-baselines
