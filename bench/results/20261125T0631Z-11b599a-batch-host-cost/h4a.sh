#!/usr/bin/env bash
# H4 (issue 15 target 3, host part), device call 1: where the 4,096-block batchWrite's "launch at" goes on the current
# tree (ac55b9e's caller launch never measured on a GPU). JMH toLaunch/callOnly/roundTrip (-p runtime=cuda, table
# mapped, the defaults), toLaunch again with -XX:UseAVX=2 (no 512-bit vectors: the scan's vector loop and the copy
# stubs), the hot stages, and the stage probe (.device/h4/probe) with the engine's await, a PAUSE spin and a plain
# spin, and once with UseAVX=2. Usage on the GPU machine after mvnw install -DskipTests and bench/device-pack.sh:
# bash .device/h4a.sh   (RT=host-path and J/CPX set: the dry run on a machine without a GPU)
RT=${RT:-cuda}
r=$OUT/x; mkdir -p $r
{ nproc; lscpu | head -30; grep -m1 MHz /proc/cpuinfo; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1; cat /sys/devices/system/cpu/cpuidle/current_driver 2>&1; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uptime; } > $r/machine.txt 2>&1
if [ -z "${J:-}" ]; then
  bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime and the classes
  J=/tmp/devjre/jre/bin/java
  cp=""; for d in .device/classes/*/classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
else cp=$CPX; fi
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
I=${I:-4}; NP=${NP:-4000}
jmh() { local t=$1; shift; timeout "$t" $J $F -cp "$cp" org.openjdk.jmh.Main "$@"; echo "rc $?"; }
date -u +%FT%TZ > $r/started.txt
jmh 80 'XgmiBatchHostBenchmark.(toLaunch|callOnly|roundTrip)' -p runtime=$RT -wi 2 -w 1 -i $I -r 1 -prof gc > $r/jmh.txt 2>&1
jmh 30 'XgmiBatchHostBenchmark.toLaunch' -p runtime=$RT -jvmArgsAppend -XX:UseAVX=2 -wi 2 -w 1 -i $I -r 1 > $r/jmh-avx2.txt 2>&1
jmh 30 'XgmiBatchStagesBenchmark.(scan|tableCopy)$' -wi 2 -w 1 -i 3 -r 1 > $r/stages.txt 2>&1
probe() { echo "== $*" >> $r/probe.txt; timeout 40 $J $F -Dn=$NP -Drt=$RT "$@" -cp ".device/h4/probe:$cp" h4p.Harness 2>&1 | grep -v -i " WARN \| INFO \| DEBUG \|logback" | tail -24 >> $r/probe.txt; echo "rc ${PIPESTATUS[0]}" >> $r/probe.txt; }
probe -Dawait=engine
probe -Dawait=pause
probe -Dawait=busy
probe -Dawait=engine -XX:UseAVX=2
probe -Dawait=busy -XX:UseAVX=2
uptime >> $r/machine.txt
date -u +%FT%TZ > $r/ended.txt
tar czf $OUT/x.tgz -C $OUT x
