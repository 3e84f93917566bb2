#!/usr/bin/env bash
# X5's device calls (issue 15 target 5, 1x H100, GPU0 -> GPU0): SingleCopyProbe (host-side parts of one 4 KiB copy:
# sync / self / worker / caller-issue), then the bench's lat-4k row (record-xgmi-results.sh's arguments: --buffer-size
# 4096 --transfer-batch-size 1 --enable-sess --iters 10000, each beside its raw 4 KiB copy + synchronize baseline of
# the same JVM) with mori4j.xgmi.caller-poll off / 0us / 50us alternated twice in one process, the same at await-spin
# 0 (off, 50us), and two processes (off, 50us); with TESTS=1 the gpu-tagged XgmiTransferGpuTest and GpuTransferGpuTest
# at the default (caller-poll off) and XgmiTransferGpuTest again with MORI_IO_XGMI_CALLER_POLL=50us.
# Usage on the GPU machine: OUT=... COMMIT=sha [TESTS=1] bash bench/results/20261125T0855Z-b1cf8f4-xgmi-session-1xh100/x5.sh
# Dry run here: M=echo PROBE="--test-device --iters 200 --rounds 1" RUNJ="java -cp ..." OUT=/tmp/x bash ...
set -u
r=$OUT/x; mkdir -p "$r"
M=${M:-bash .device/run.sh org.mori4j.bench.Mori4jCommand}
RUNJ=${RUNJ:-bash .device/run.sh}
{ date -u +%FT%TZ; echo "commit ${COMMIT:-unknown}"; nproc; lscpu | sed -n 's/^Model name: *//p'; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; uptime; } > "$r/machine.txt" 2>&1
timeout 60 $RUNJ org.mori4j.transport.xgmi.SingleCopyProbe ${PROBE:---iters 5000 --rounds 3} > "$r/probe.tsv" 2> "$r/probe.stderr"; echo "# rc $?" >> "$r/probe.tsv"
lat() { # name caller-poll await-spin(empty: default) sp|tp
  local name=$1 poll=$2 spin=$3 mode=$4 flag=()
  [ "$mode" = sp ] && flag=(--xgmi-single-process)
  echo "== $name: MORI_IO_XGMI_CALLER_POLL=$poll ${spin:+MORI_IO_AWAIT_SPIN=$spin} $mode" > "$r/$name.txt"
  env MORI_IO_XGMI_CALLER_POLL="$poll" ${spin:+MORI_IO_AWAIT_SPIN=$spin} timeout 45 $M bench --backend xgmi --gpu-device 0 --target-gpu-device 0 "${flag[@]}" \
    --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 10000 --json "$r/$name.json" >> "$r/$name.txt" 2> "$r/$name.stderr"
  echo "exit $?" >> "$r/$name.txt"
  grep -E "^\| *4 KiB|4 KiB \+ sync|x the raw" "$r/$name.txt" | sed "s/^/$name: /"
}
for k in 1 2; do for p in off 0us 50us; do lat "sp-$p-$k" "$p" "" sp; done; done
lat sp-nospin-off off 0us sp
lat sp-nospin-50us 50us 0us sp
lat tp-off off "" tp
lat tp-50us 50us "" tp
if [ "${TESTS:-0}" = 1 ]; then
  # the default (caller-poll off), then the XGMI tests once more with the caller polling
  for c in XgmiTransferGpuTest GpuTransferGpuTest XgmiTransferGpuTest@50us; do
    n=${c%@*}; p=off; [ "$c" != "$n" ] && p=${c#*@}
    MORI_IO_XGMI_CALLER_POLL=$p timeout 80 $RUNJ --tests --include-tag gpu --include-classname ".*$n" > "$r/test-$c.txt" 2>&1
    echo "rc $?" >> "$r/test-$c.txt"; grep -E "tests (successful|failed|aborted)|^rc" "$r/test-$c.txt" | sed "s/^/$c: /"
  done
fi
uptime >> "$r/machine.txt"; date -u +%FT%TZ >> "$r/machine.txt"
tar czf "$OUT/x.tgz" -C "$OUT" x && rm -rf "$r"
