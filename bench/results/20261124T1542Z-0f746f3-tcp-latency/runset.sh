#!/bin/bash
# usage: runset.sh JARDIR OUTDIR ; runs the P1 point set, each with its baselines
J=$1; O=$2; mkdir -p $O
JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
b() { name=$1; shift; echo "== $name $(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)" >> $O/load.txt; $JAVA $F -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench "$@" --json $O/$name.json > $O/$name.txt 2> $O/$name.err; echo "rc=$? $name" >> $O/load.txt; }
b session-4k-write --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000 --op-type write
b session-4k-read --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --warmup-iters 1000 --op-type read
b default-128x4k
b write-64m --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type write
b read-64m --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type read
