#!/usr/bin/env bash
# P4: host cost of a 4,096-block XGMI batchWrite. Usage (on the GPU machine, after mvnw install -DskipTests and
# ../shared/device/pack.sh, with this script in .device/ and the probe build in .device/probe/): bash .device/p4.sh <label>
r=$OUT/$1; mkdir -p $r
nproc > $r/machine.txt; lscpu | head -24 >> $r/machine.txt; nvidia-smi -L >> $r/machine.txt 2>&1; uptime >> $r/machine.txt
# the same JMH command as P3's p3.sh (20261124T1604Z-493daab-batch-host-cost)
timeout 150 bash .device/run.sh org.openjdk.jmh.Main 'XgmiBatchHostBenchmark|TcpBatchCallBenchmark' -wi 3 -w 2 -i 5 -r 2 -prof gc > $r/jmh.txt 2>&1
echo "jmh rc $?" >> $r/jmh.txt
# the call's stages one at a time, hot (scan, table copy, upload, the copies the worker path needs)
timeout 70 bash .device/run.sh org.openjdk.jmh.Main 'XgmiBatchStagesBenchmark' -wi 2 -w 2 -i 3 -r 2 > $r/stages.txt 2>&1
echo "stages rc $?" >> $r/stages.txt
# stage timestamps inside the real call (probe build of the same tree: .device/probe, not committed), with the
# host-path runtime's gather (as in the benchmark) and without it (no 32 MiB pass through the CPU caches between calls)
if [ -d .device/probe ]; then
  cp=".device/probe/harness:.device/probe/transport:.device/probe/engine"; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="$cp:/tmp/devjre/lib/*"
  for g in false true; do
    echo "== nogather=$g" >> $r/probe.txt
    timeout 40 /tmp/devjre/jre/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Dn=2000 -Dnogather=$g -cp "$cp" p4h.Harness 2>&1 | grep -v -i " WARN \| INFO \| DEBUG \|logback" | tail -16 >> $r/probe.txt
  done
fi
# the real CUDA path: batches now launch from the caller's thread when the worker is idle
timeout 75 bash .device/run.sh --tests --include-tag gpu --include-classname '.*XgmiTransferGpuTest' > $r/gpu-test.txt 2>&1
echo "gpu test rc $?" >> $r/gpu-test.txt
