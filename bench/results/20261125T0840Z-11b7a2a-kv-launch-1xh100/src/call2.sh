#!/usr/bin/env bash
# K5's second device call (1x H100): record-kv-gap.sh as the task names it (8 JVMs: traced/untraced x fused/unfused x
# calls of 1, 2, 4... layers / one call), the two gpu-tagged KV/XGMI test classes with the defaults, then extra rows
# (fused with the table in device memory, repeats for the JVM spread) and the same tests with fuse-batches on, each
# only while time is left. Usage: bash src/call2.sh OUTDIR
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
KV_STOP_AFTER=140 bash bench/record-kv-gap.sh "$out/kv-gap" > "$out/kv-gap.txt" 2>&1
t0=$SECONDS
timeout 100 ${MORI4J_CMD:-bash .device/run.sh} --tests --include-tag gpu --include-classname '.*KvBenchXgmiGpuTest' --include-classname '.*XgmiTransferGpuTest' > "$out/gpu-tests.log" 2>&1
echo "gpu-tests rc=$? secs=$((SECONDS - t0)) at $SECONDS" >> "$out/steps.txt"
if [ "$SECONDS" -lt 190 ]; then
  STOP_AFTER=$((230 - SECONDS)) bash "$here/call.sh" "$out/extra" fused-devtable:MORI_IO_XGMI_FUSE_BATCHES=on,MORI_IO_XGMI_BLOCK_TABLE=device \
    trace-fused-devtable:MORI4J_XGMI_TRACE=1,MORI_IO_XGMI_FUSE_BATCHES=on,MORI_IO_XGMI_BLOCK_TABLE=device \
    fused-2:MORI_IO_XGMI_FUSE_BATCHES=on unfused-2:MORI_IO_XGMI_FUSE_BATCHES=off > "$out/extra.txt" 2>&1
fi
echo "extra done at $SECONDS" >> "$out/steps.txt"
if [ "$SECONDS" -lt 235 ]; then
  t0=$SECONDS
  MORI_IO_XGMI_FUSE_BATCHES=on timeout 55 ${MORI4J_CMD:-bash .device/run.sh} --tests --include-tag gpu --include-classname '.*KvBenchXgmiGpuTest' --include-classname '.*XgmiTransferGpuTest' > "$out/gpu-tests-fused.log" 2>&1
  echo "gpu-tests-fused rc=$? secs=$((SECONDS - t0)) at $SECONDS" >> "$out/steps.txt"
fi
cat "$out/steps.txt" "$out/kv-gap/rc.txt" "$out/extra/rc.txt" 2>/dev/null
