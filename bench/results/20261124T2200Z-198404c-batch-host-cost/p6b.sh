#!/usr/bin/env bash
# P6, second device call: host cost of a 4,096-block XGMI batchWrite, before/after in one call, on host-path and on
# the H100 with CUDA; the stage probe; XgmiTransferGpuTest. Usage (on the GPU machine, after mvnw install -DskipTests
# and ../shared/device/pack.sh, with this script in .device/, the BatchBlocks class of fe60c0f~1 (362ee40) in .device/p6/before,
# the probe build in .device/p6/probe and the loop-shape probe in .device/p6/diag): bash .device/p6b.sh <label>
r=$OUT/$1; mkdir -p $r
nproc > $r/machine.txt; lscpu | head -24 >> $r/machine.txt; nvidia-smi -L >> $r/machine.txt 2>&1; uptime >> $r/machine.txt
bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime
J=/tmp/devjre/jre/bin/java
cp=""; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
jmh() { local t=$1 v=$2; shift 2; local c="$cp"; [ "$v" = before ] && c=".device/p6/before:$cp"
  timeout "$t" $J --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -cp "$c" org.openjdk.jmh.Main "$@"; echo "rc $?"; }
timeout 20 $J -cp .device/p6/diag Y > $r/loop-shapes.txt 2>&1; echo "rc $?" >> $r/loop-shapes.txt
for v in before after; do
  jmh 30 $v 'XgmiBatchStagesBenchmark.scan' -wi 2 -w 1 -i 3 -r 1 > $r/scan-$v.txt 2>&1
  jmh 80 $v 'XgmiBatchHostBenchmark' -p runtime=host-path,cuda -wi 2 -w 1 -i 4 -r 1 -prof gc > $r/host-$v.txt 2>&1
done
jmh 40 after 'XgmiBatchStagesBenchmark' -wi 2 -w 1 -i 3 -r 1 > $r/stages-after.txt 2>&1
# stage timestamps inside the real call (probe build of this tree: .device/p6/probe, sources in the results folder)
for rt in cuda host-path; do
  echo "== runtime $rt" >> $r/probe.txt
  timeout 40 $J --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dn=3000 -Drt=$rt -cp ".device/p6/probe:$cp" p6h.Harness 2>&1 | grep -v -i " WARN \| INFO \| DEBUG \|logback" | tail -14 >> $r/probe.txt
done
timeout 75 bash .device/run.sh --tests --include-tag gpu --include-classname '.*XgmiTransferGpuTest' > $r/gpu-test.txt 2>&1
echo "gpu test rc $?" >> $r/gpu-test.txt
