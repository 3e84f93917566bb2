#!/bin/bash
# usage: abr.sh OUTDIR ROUNDS OP JARNAME... : interleaved 64 MiB rows of the given jar copies (/tmp/r8/jars/NAME), with UCX tag_bw and iperf3, each run under the build lock
O=$1; N=$2; OP=$3; shift 3; A="--buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type $OP"
for r in $(seq 1 $N); do for j in "$@"; do
  flock /tmp/mori4j-build.lock $R8/b.sh /tmp/r8/jars/$j $O $j-$OP-r$r $A >/dev/null; done; done
