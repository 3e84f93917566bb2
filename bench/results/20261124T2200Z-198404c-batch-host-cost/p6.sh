#!/usr/bin/env bash
# P6: host cost of a 4,096-block XGMI batchWrite, before/after in one call. Usage (on the GPU machine, after
# mvnw install -DskipTests and ../shared/device/pack.sh, this script in .device/, the previous BatchBlocks class in
# .device/p6/before and the loop-shape probes in .device/p6/diag): bash .device/p6.sh <label>
r=$OUT/$1; mkdir -p $r
nproc > $r/machine.txt; lscpu | head -24 >> $r/machine.txt; nvidia-smi -L >> $r/machine.txt 2>&1; uptime >> $r/machine.txt
bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime
J=/tmp/devjre/jre/bin/java
$J -XX:+PrintFlagsFinal -version 2>/dev/null | grep -E " UseAVX | MaxVectorSize | LoopUnrollLimit | UseSuperWord " >> $r/machine.txt
cp=""; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
# JMH with the working tree's classes (after) or the previous BatchBlocks in front of them (before)
jmh() { local t=$1 v=$2; shift 2; local c="$cp"; [ "$v" = before ] && c=".device/p6/before:$cp"
  timeout "$t" $J --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -cp "$c" org.openjdk.jmh.Main "$@"; echo "rc $?"; }
# loop shapes on this CPU (p50 of 4,096 blocks, plain System.nanoTime loop; sources in the results folder)
timeout 40 $J -cp .device/p6/diag Diag > $r/loop-shapes.txt 2>&1; echo "rc $?" >> $r/loop-shapes.txt
for v in before after; do
  jmh 30 $v 'XgmiBatchStagesBenchmark.scan' -wi 2 -w 1 -i 3 -r 1 > $r/scan-$v.txt 2>&1
  jmh 90 $v 'XgmiBatchHostBenchmark' -p runtime=host-path,cuda -wi 2 -w 1 -i 4 -r 1 -prof gc > $r/host-$v.txt 2>&1
done
