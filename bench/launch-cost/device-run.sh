#!/usr/bin/env bash
# One device call for the launch-cost comparison (README.md here): the C baseline (launch_cost, built on the VM and
# carried as .device/launch_cost) and LaunchCostProbe (java, java-raw, java-critical; with OLD=dir also the engine path
# on the classes in dir, put in front of the class path) alternated three times on the same kernel image, which the
# probe writes first; then, with TESTS=1, XgmiTransferGpuTest and CudaRuntimeGpuTest on the GPU. Outputs under
# $OUT/x, archived as $OUT/x.tgz. Usage on the GPU machine, after mvnw install -DskipTests and bench/device-pack.sh:
#   OUT=... [OLD=.device/l1/old] [TESTS=1] bash bench/launch-cost/device-run.sh
# Dry run on a machine without a GPU: LD_LIBRARY_PATH naming a stand-in libcuda.so.1, DRY_IMAGE any file (no NVRTC).
set -u
r=$OUT/x; mkdir -p "$r"
{ nproc; lscpu | head -16; grep -m1 MHz /proc/cpuinfo; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; uptime; } > "$r/machine.txt" 2>&1
date -u +%FT%TZ > "$r/started.txt"
bash .device/run.sh -version > /dev/null 2>&1 # unpacks the runtime and the classes
J=/tmp/devjre/jre/bin/java
cp=""; for d in .device/classes/*/classes .device/classes/*/test-classes; do cp="$cp:$d"; done; cp="${cp#:}:/tmp/devjre/lib/*"
F="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
C=.device/launch_cost
"$C" > /dev/null 2>&1; rc=$?
if [ $rc -ne 1 ]; then # its usage error (1) means it runs here
  echo "carried launch_cost does not run here; building it" >> "$r/machine.txt"
  inc=$(ls -d /usr/local/cuda*/include 2>/dev/null | head -1)
  gcc -O2 -I"$inc" -o /tmp/launch_cost bench/launch-cost/launch_cost.c -ldl >> "$r/machine.txt" 2>&1 && C=/tmp/launch_cost
fi
probe() { local pre=$1; shift; timeout 90 $J $F -cp "$pre$cp" org.mori4j.transport.xgmi.LaunchCostProbe "$@" 2> >(grep -v -i " DEBUG \|logback" >&2); echo "# rc $?"; }
if [ -n "${DRY_IMAGE:-}" ]; then cp "$DRY_IMAGE" "$r/gather.cubin"; else
  probe "" --impls java --rounds 0 --write-image "$r/gather.cubin" > "$r/image.txt" 2>&1; fi
ITERS=${ITERS:-2000}
for k in 1 2 3; do
  echo "# pass $k" | tee -a "$r/c.tsv" "$r/java.tsv" > /dev/null
  timeout 60 "$C" "$r/gather.cubin" --iters "$ITERS" --rounds 3 >> "$r/c.tsv" 2>&1; echo "# rc $?" >> "$r/c.tsv"
  probe "" --image "$r/gather.cubin" --iters "$ITERS" --rounds 3 >> "$r/java.tsv" 2>&1
  if [ -n "${OLD:-}" ]; then
    echo "# pass $k" >> "$r/java-old.tsv"
    probe "$OLD:" --image "$r/gather.cubin" --impls java --iters "$ITERS" --rounds 3 >> "$r/java-old.tsv" 2>&1
  fi
done
# the engine's CUDA_DEVICE_MAX_CONNECTIONS=32 against CUDA's default of 8 (the variable set beforehand wins in both)
echo "# CUDA_DEVICE_MAX_CONNECTIONS=8" | tee -a "$r/c.tsv" "$r/java.tsv" > /dev/null
CUDA_DEVICE_MAX_CONNECTIONS=8 timeout 60 "$C" "$r/gather.cubin" --iters "$ITERS" --rounds 3 >> "$r/c.tsv" 2>&1; echo "# rc $?" >> "$r/c.tsv"
CUDA_DEVICE_MAX_CONNECTIONS=8 probe "" --image "$r/gather.cubin" --impls java,java-raw --iters "$ITERS" --rounds 3 >> "$r/java.tsv" 2>&1
if [ "${TESTS:-0}" = 1 ]; then
  timeout 90 bash .device/run.sh --tests --include-tag gpu --include-classname '.*(XgmiTransferGpuTest|CudaRuntimeGpuTest)' > "$r/gpu-test.txt" 2>&1
  echo "gpu test rc $?" >> "$r/gpu-test.txt"
fi
uptime >> "$r/machine.txt"
date -u +%FT%TZ > "$r/ended.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x
