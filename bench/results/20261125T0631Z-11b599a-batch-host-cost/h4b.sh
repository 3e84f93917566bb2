#!/usr/bin/env bash
# H4 (issue 15 target 3, host part), device call 2: the same measurements after 040a2f8 (BatchBlocks.scan asks whether
# sizes differ in the vectorized loop; the join pass loads no sizes when they are equal), alternated with the previous
# BatchBlocks (76aa49d's, compiled on the VM into .device/h4/old and put in front of the class path: "old"), then
# XgmiTransferGpuTest on the GPU. Usage on the GPU machine after mvnw install -DskipTests and bench/device-pack.sh:
# bash .device/h4b.sh   (RT=host-path and J/CPX set: the dry run on a machine without a GPU)
RT=${RT:-cuda}
r=$OUT/x; mkdir -p $r
{ nproc; lscpu | head -16; grep -m1 MHz /proc/cpuinfo; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uptime; } > $r/machine.txt 2>&1
if [ -z "${J:-}" ]; then
  bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime and the classes
  J=/tmp/devjre/jre/bin/java
  cp=""; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
else cp=$CPX; fi
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
I=${I:-4}; NP=${NP:-4000}
jmh() { local t=$1 pre=$2; shift 2; timeout "$t" $J $F -cp "$pre$cp" org.openjdk.jmh.Main "$@"; echo "rc $?"; }
date -u +%FT%TZ > $r/started.txt
for v in old new old new; do
  pre=""; [ $v = old ] && pre=".device/h4/old:"
  echo "== $v" >> $r/toLaunch.txt
  jmh 40 "$pre" 'XgmiBatchHostBenchmark.toLaunch' -p runtime=$RT -wi 2 -w 1 -i $I -r 1 -prof gc >> $r/toLaunch.txt 2>&1
done
for v in old new; do
  pre=""; [ $v = old ] && pre=".device/h4/old:"
  echo "== $v" >> $r/callOnly-roundTrip.txt
  jmh 60 "$pre" 'XgmiBatchHostBenchmark.(callOnly|roundTrip)' -p runtime=$RT -wi 2 -w 1 -i $I -r 1 >> $r/callOnly-roundTrip.txt 2>&1
  echo "== $v" >> $r/stages.txt
  jmh 30 "$pre" 'XgmiBatchStagesBenchmark.(scan|tableCopy)$' -wi 2 -w 1 -i 3 -r 1 >> $r/stages.txt 2>&1
done
for v in old new old new; do
  pre=""; [ $v = old ] && pre=".device/h4/old:"
  echo "== $v" >> $r/probe.txt
  timeout 40 $J $F -Dn=$NP -Drt=$RT -Dawait=engine -cp "$pre.device/h4/probe:$cp" h4p.Harness 2>&1 | grep -v -i " WARN \| INFO \| DEBUG \|logback" | tail -30 >> $r/probe.txt
  echo "rc ${PIPESTATUS[0]}" >> $r/probe.txt
done
if [ "$RT" = cuda ]; then
  timeout 75 bash .device/run.sh --tests --include-tag gpu --include-classname '.*XgmiTransferGpuTest' > $r/gpu-test.txt 2>&1
  echo "gpu test rc $?" >> $r/gpu-test.txt
fi
uptime >> $r/machine.txt
date -u +%FT%TZ > $r/ended.txt
tar czf $OUT/x.tgz -C $OUT x
