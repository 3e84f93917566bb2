#!/usr/bin/env bash
# H1 (issue 15 target 3, host part): one device call. The 4,096 x 4 KiB batchWrite's host cost with the block table
# copied to the device (the code path every batch took before 2e72642: "before") and read in place ("after"), with the
# engine's default await spin and with a caller spinning through the batch (1ms); the whole batch (roundTrip) in both
# table modes; the hot stages; the stage probe (probe build in .device/h1/probe); XgmiTransferGpuTest on the GPU.
# Usage on the GPU machine, after mvnw install -DskipTests and ../shared/device/pack.sh: bash .device/h1.sh
r=$OUT/x; mkdir -p $r
{ nproc; lscpu | head -24; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uptime; } > $r/machine.txt 2>&1
bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime
J=/tmp/devjre/jre/bin/java
cp=""; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
jmh() { local t=$1; shift; timeout "$t" $J $F -cp "$cp" org.openjdk.jmh.Main "$@"; echo "rc $?"; }
date -u +%FT%TZ > $r/started.txt
jmh 100 'XgmiBatchHostBenchmark.toLaunch' -p runtime=cuda -p table=device,mapped -p awaitSpin=default,1ms -wi 2 -w 1 -i 4 -r 1 -prof gc > $r/toLaunch.txt 2>&1
jmh 60 'XgmiBatchHostBenchmark.callOnly' -p runtime=cuda -p table=device,mapped -wi 2 -w 1 -i 4 -r 1 -prof gc > $r/callOnly.txt 2>&1
jmh 50 'XgmiBatchHostBenchmark.roundTrip' -p runtime=cuda -p table=device,mapped -wi 2 -w 1 -i 4 -r 1 > $r/roundTrip.txt 2>&1
jmh 30 'XgmiBatchStagesBenchmark.(scan|tableCopy)$' -wi 2 -w 1 -i 3 -r 1 > $r/stages.txt 2>&1
for spin in default 1ms; do for t in device mapped; do
  extra=""; [ $spin != default ] && extra="-Dmori4j.engine.await-spin=$spin"
  timeout 30 $J $F -Dn=3000 -Drt=cuda -Dmori4j.xgmi.block-table=$t $extra -cp ".device/h1/probe:$cp" h1p.Harness 2>&1 | grep -v -i " WARN \| INFO \| DEBUG \|logback" | tail -15 >> $r/probe.txt
  echo "rc $?" >> $r/probe.txt
done; done
timeout 75 bash .device/run.sh --tests --include-tag gpu --include-classname '.*XgmiTransferGpuTest' > $r/gpu-test.txt 2>&1
echo "gpu test rc $?" >> $r/gpu-test.txt
date -u +%FT%TZ > $r/ended.txt
tar czf $OUT/x.tgz -C $OUT x
