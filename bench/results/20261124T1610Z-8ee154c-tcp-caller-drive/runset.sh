#!/bin/bash
# usage: runset.sh JARDIR OUTDIR TAG ; one pass: 4 KiB session write and read, caller-drive off / on (spin 100us) /
# on (spin 50us), each bench run with its baselines (NIO ping-pong, UCX tag_lat, ...) in the same run; then the default
# row (128 x 4 KiB) off and on. The load average (1 min) is written before each run.
J=$1; O=$2; T=$3; mkdir -p $O
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
b() { name=$1; shift; echo "== $T-$name $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/load.txt
  $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench "$@" --json $O/$T-$name.json > $O/$T-$name.txt 2> $O/$T-$name.err; echo "rc=$? $T-$name" >> $O/load.txt; }
S="--buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000"
for op in write read; do
  MORI_IO_TCP_CALLER_DRIVE=off b off-4k-$op $S --op-type $op
  MORI_IO_TCP_CALLER_DRIVE=on b on100-4k-$op $S --op-type $op
  MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_CALLER_DRIVE_SPIN=50us b on50-4k-$op $S --op-type $op
done
MORI_IO_TCP_CALLER_DRIVE=off b off-128x4k --no-baselines
MORI_IO_TCP_CALLER_DRIVE=on MORI_IO_TCP_CALLER_DRIVE_SPIN=50us b on50-128x4k --no-baselines
