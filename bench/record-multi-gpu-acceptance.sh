#!/usr/bin/env bash
# The multi-GPU acceptance runs of issues 13 (GPU-initiated transfers), 14 (KV-cache migration over XGMI) and
# 15 (XGMI targets), one part per call, so that a machine lent with two or more GPUs for a short time yields
# every figure those issues ask for. Written for the GPU machine (no Maven, no git): build and pack here
# (`./mvnw -DskipTests install && bash bench/device-pack.sh`), then on the machine, per part:
#   MORI4J_COMMIT=<sha> bash bench/record-multi-gpu-acceptance.sh PART [DIR]
# Parts (each fits a 10-minute call on 2x H200; timings from 1x H100 runs where that is all there was):
#   gpuinit  issue 13: the gpu-tagged GPU-initiated and shmem-over-endpoints tests (two JVMs get one GPU each
#            where there are two), the GpuInitiatedWrite example, and shmem-bench --disable-p2p beside the
#            P2P kernel and NCCL (the host proxy is an emulated NIC: its rows say so)
#   kv       issue 14: kv-bench over XGMI, GPU 0 -> GPU 1, Llama-3-70B, 4,096 tokens, fully scattered, push,
#            pull and layer-streamed, in one process and in two (JSON per process mode); Llama-3-8B layer-streamed
#            in both modes; with MORI4J_KV_HOP_TRACE=1 (the landed hop's stages at each JVM's exit; both ends
#            only in one process) and the landing board as configured (MORI4J_KV_LANDING_BOARD=off: Pekko only)
#   kv4      issue 16 item 3: kv-bench with two prefill engines pushing to two decode engines at once, Llama-3-70B,
#            4,096 tokens, fully scattered, push, pull and layer-streamed, every engine in one JVM and one JVM per
#            decode engine: on 4+ GPUs --prefill-gpus 0,1 --decode-gpus 2,3 and also 0,1 -> 1,0; on 2 GPUs 0,1 -> 1,0
#            (each GPU sends once and receives once); on 1 GPU 0,0 -> 0,0 (a dry run: says nothing about NVLink).
#            MORI4J_KV4_ITERS / MORI4J_KV4_WARMUP (default 20 / 3) and MORI4J_KV4_TOKENS (default 4096) shrink it
#   xgmi     issue 15: bench/record-xgmi-results.sh's rows in one process (the two-process rows: part xgmi2)
#   xgmi2    the same rows with the target in a second JVM
# DIR defaults to bench/results/<UTC>-<commit>-multi-gpu. MORI4J_CMD is how mori4j runs (default:
# "bash .device/run.sh org.mori4j.bench.Mori4jCommand" when .device/run.sh exists, else ./mori4j).
# A failed step does not stop the others, but the script then exits 1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
part=${1:?usage: record-multi-gpu-acceptance.sh gpuinit|kv|kv4|xgmi|xgmi2 [DIR]}
case $part in gpuinit|kv|kv4|xgmi|xgmi2) ;; *) echo "unknown part '$part' (gpuinit, kv, kv4, xgmi, xgmi2)" >&2; exit 2;; esac
commit=${MORI4J_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
dir=${2:-bench/results/$(date -u +%Y%m%dT%H%MZ)-$commit-multi-gpu}
mkdir -p "$dir"
default_cmd=./mori4j
[ -f .device/run.sh ] && default_cmd="bash .device/run.sh org.mori4j.bench.Mori4jCommand"
read -r -a mori4j <<< "${MORI4J_CMD:-$default_cmd}"
export NCCL_NVLS_ENABLE=0
. bench/gpu-machine-info.sh
gpus=$(gpu_count)
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $commit"
  echo "part:    $part"
  echo "host:    $(uname -srm), $(nproc) CPUs"
  echo "gpus:    $gpus"
  gpu_machine_info
} > "$dir/machine-$part.txt"
[ "$gpus" -ge 2 ] || echo "WARNING: $gpus GPU(s): these are the two-GPU runs; on one GPU both sides share GPU 0 and the figures are not the acceptance figures" | tee -a "$dir/machine-$part.txt"
# the receiving GPU: 1 where there are two, else 0 (a dry run of the script on one GPU)
target=$([ "$gpus" -ge 2 ] && echo 1 || echo 0)
failed=0

# step NAME SECONDS COMMAND...: output in DIR/NAME.log, one summary line in DIR/summary-PART.txt
step() {
  local name=$1 limit=$2; shift 2
  local s; s=$(date +%s)
  echo "== $*" > "$dir/$name.log"
  timeout "$limit" "$@" >> "$dir/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || failed=1
  echo "$name rc=$rc $(( $(date +%s) - s ))s $(grep -E 'tests (successful|failed|skipped)' "$dir/$name.log" | tr -s ' ' | tr '\n' ' ')" | tee -a "$dir/summary-$part.txt"
}

# gpu-tagged test classes, each in its own JVM: a kernel that traps poisons its process's CUDA context
tests() {
  local limit=$1; shift
  for c in "$@"; do
    step "test-${c##*.}" "$limit" bash .device/run.sh --tests --include-tag gpu --include-classname "^${c//./\\.}$"
  done
}

case $part in
  gpuinit)
    tests 200 org.mori4j.io.gpuinit.GpuInitiatedGpuTest org.mori4j.io.gpuinit.GpuInitiatedTwoJvmGpuTest \
      org.mori4j.shmem.ShmemDeviceApiGpuTest org.mori4j.shmem.collectives.ShmemCollectivesProxyGpuTest
    step example-GpuInitiatedWrite 120 bash .device/run.sh org.mori4j.examples.GpuInitiatedWrite
    step shmem-bench-disable-p2p 240 "${mori4j[@]}" shmem-bench --disable-p2p --max-size 4M --json "$dir/shmem-bench-disable-p2p.json"
    ;;
  kv)
    export MORI4J_KV_HOP_TRACE=${MORI4J_KV_HOP_TRACE:-1}
    for proc in single two; do
      flag=(); [ $proc = single ] && flag=(--xgmi-single-process)
      step "kv-xgmi-llama3-70b-4096-$proc-process" 280 "${mori4j[@]}" kv-bench --backend xgmi --gpu-device 0 --target-gpu-device "$target" "${flag[@]}" \
        --model llama3-70b --tokens 4096 --fragmentation 1 --mode push,pull,stream --json "$dir/kv-xgmi-llama3-70b-4096-$proc-process.json"
      step "kv-xgmi-llama3-8b-4096-$proc-process" 200 "${mori4j[@]}" kv-bench --backend xgmi --gpu-device 0 --target-gpu-device "$target" "${flag[@]}" \
        --model llama3-8b --tokens 4096 --fragmentation 1 --mode stream --json "$dir/kv-xgmi-llama3-8b-4096-$proc-process.json"
    done
    ;;
  kv4)
    if [ "$gpus" -ge 4 ]; then layouts=("0,1 2,3" "0,1 1,0")
    elif [ "$gpus" -ge 2 ]; then layouts=("0,1 1,0")
    else layouts=("0,0 0,0"); fi
    for l in "${layouts[@]}"; do
      read -r pre dec <<< "$l"
      for proc in single multi; do
        flag=(); [ $proc = single ] && flag=(--xgmi-single-process)
        name="kv4-xgmi-llama3-70b-${pre//,/}to${dec//,/}-$proc-jvm"
        step "$name" 290 "${mori4j[@]}" kv-bench --backend xgmi --prefill-gpus "$pre" --decode-gpus "$dec" "${flag[@]}" --model llama3-70b \
          --tokens "${MORI4J_KV4_TOKENS:-4096}" --fragmentation 1 --mode push,pull,stream --iters "${MORI4J_KV4_ITERS:-20}" --warmup "${MORI4J_KV4_WARMUP:-3}" \
          --max-memory 65536 --json "$dir/$name.json"
      done
    done
    ;;
  xgmi|xgmi2)
    mode=same-process; [ $part = xgmi2 ] && mode=two-process
    MORI4J_XGMI_MODES=$mode MORI4J_CMD="${mori4j[*]}" MORI4J_COMMIT=$commit step "record-xgmi-$mode" 560 bash bench/record-xgmi-results.sh "$dir/xgmi"
    ;;
esac
exit $failed
