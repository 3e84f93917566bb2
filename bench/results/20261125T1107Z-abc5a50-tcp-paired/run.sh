#!/usr/bin/env bash
# Runs this folder's recordings, each under the build lock (other helpers build on the same 2 cores), with the jar
# built from a clean export of the commit (git archive COMMIT | tar -x -C $SRC; cd $SRC; ./mvnw -o -DskipTests package),
# so that other helpers' uncommitted edits in the shared checkout are not measured. Usage: run.sh SRC OUTDIR [again]
set -uo pipefail
src=$1; out=$2
mkdir -p "$out"
[ "${3:-}" = again ] || {
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit:  $(git -C "$(dirname "$0")" rev-parse HEAD) (jar built from git archive abc5a50)"
  echo "host:    $(uname -srm), $(nproc) CPUs, $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1) (the shared 2-core VM)"
  echo "memory:  $(free -g | awk '/^Mem:/{print $2 " GiB"}')"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the runs)"
  echo "java:    $(/usr/lib/jvm/temurin-25-jdk-amd64/bin/java -version 2>&1 | head -1)"
  echo "iperf3:  $(iperf3 --version 2>/dev/null | head -1 || echo 'not installed')"
  echo "ucx:     $(ucx_info -v 2>/dev/null | head -1 || echo 'not installed')"
} > "$out/machine.txt"
run() {
  local name=$1; shift
  local t0=$(date +%s)
  flock /tmp/mori4j-build.lock bash -c '
    echo "== $(date -u +%H:%M:%SZ) load $(cut -d" " -f1-3 /proc/loadavg) mori4j bench $*" 
    "'"$src"'/mori4j" bench "$@" --json "'"$out"'/'"$name"'.json" 2>"'"$out"'/'"$name"'.stderr"
    echo "rc=$? end $(date -u +%H:%M:%SZ) load $(cut -d" " -f1-3 /proc/loadavg)"' _ "$@" > "$out/$name.txt"
  echo "$name: $(( $(date +%s) - t0 )) s $(tail -1 "$out/$name.txt")" | tee -a "$out/walltime.txt"
}
start=$(date +%s)
if [ "${3:-}" = again ]; then
  # the two 4 KiB runs once more, after the first 4 KiB read ran three of its rounds in the VM's slow mode (README)
  run 4k-sess-write-2 --rounds 5 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write
  run 4k-sess-read-2 --rounds 5 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type read
  echo "again: $(( $(date +%s) - start )) s" | tee -a "$out/walltime.txt"
  exit 0
fi
run default-row --rounds 5
run 64m-write --rounds 5 --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type write
run 64m-read --rounds 5 --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type read
run 4k-sess-write --rounds 5 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type write
run 4k-sess-read --rounds 5 --buffer-size 4096 --transfer-batch-size 1 --enable-sess --iters 30000 --warmup-iters 1000 --op-type read
echo "all: $(( $(date +%s) - start )) s" | tee -a "$out/walltime.txt"
