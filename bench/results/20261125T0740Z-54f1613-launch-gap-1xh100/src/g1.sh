#!/usr/bin/env bash
# G1's one device call (launch gap): the C program launch_gap (the engine's launch shape, one factor at a time) on the
# engine's kernel image, then G1Harness on the probe build (stamps inside the launch, backend with 64 and 1 streams
# alternated), then XgmiBatchHostBenchmark.toLaunch -p runtime=cuda once as the same-machine reference for H4's figure.
# Usage on the GPU machine after mvnw install -DskipTests and bench/device-pack.sh, with .device/g1/{launch_gap,
# launch_gap.c, probe/} carried:  bash .device/g1/g1.sh
# Dry run without a GPU: RT=host-path LD_LIBRARY_PATH=<stand-in libcuda dir> DRY_IMAGE=<any file> bash .device/g1/g1.sh
set -u
RT=${RT:-cuda}
r=$OUT/x; mkdir -p "$r"
{ nproc; lscpu | head -16; grep -m1 MHz /proc/cpuinfo; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm --format=csv; uptime; } > "$r/machine.txt" 2>&1
date -u +%FT%TZ > "$r/started.txt"
bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime and the classes
J=/tmp/devjre/jre/bin/java
cp=""; for d in .device/classes/*/classes .device/classes/*/test-classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
quiet() { grep -v -i " DEBUG \| INFO \| WARN \|logback"; }
if [ -n "${DRY_IMAGE:-}" ]; then cp "$DRY_IMAGE" "$r/gather.cubin"; else
  timeout 90 $J $F -cp "$cp" org.mori4j.transport.xgmi.LaunchCostProbe --impls java --rounds 0 --write-image "$r/gather.cubin" > "$r/image.txt" 2>&1
  echo "rc $?" >> "$r/image.txt"; fi
C=.device/g1/launch_gap
"$C" > /dev/null 2>&1; rc=$?
if [ $rc -ne 1 ]; then # its usage error (1) means it runs here
  echo "carried launch_gap does not run here (rc $rc); building it" >> "$r/machine.txt"
  inc=$(ls -d /usr/local/cuda*/include 2>/dev/null | head -1)
  gcc -O2 -I"$inc" -o /tmp/launch_gap .device/g1/launch_gap.c -ldl -lpthread >> "$r/machine.txt" 2>&1 && C=/tmp/launch_gap
fi
timeout 100 "$C" "$r/gather.cubin" --iters ${ITERS:-4000} --rounds ${ROUNDS:-3} > "$r/c.tsv" 2> "$r/c.err"; echo "# rc $?" >> "$r/c.tsv"
for st in 64 1 64 1; do
  echo "== streams $st" >> "$r/harness.txt"
  timeout 40 $J $F -Dn=${NP:-3000} -Drt=$RT -Dstreams=$st -cp ".device/g1/probe:$cp" g1p.G1Harness 2>&1 | quiet | tail -12 >> "$r/harness.txt"
  echo "rc ${PIPESTATUS[0]}" >> "$r/harness.txt"
done
timeout 45 $J $F -cp "$cp" org.openjdk.jmh.Main 'XgmiBatchHostBenchmark.toLaunch' -p runtime=$RT -wi 2 -w 1 -i 3 -r 1 > "$r/toLaunch.txt" 2>&1
echo "rc $?" >> "$r/toLaunch.txt"
uptime >> "$r/machine.txt"
date -u +%FT%TZ > "$r/ended.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
