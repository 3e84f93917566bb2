#!/bin/bash
# usage: rw.sh OUTDIR ROUNDS JARDIR: per round a 64 MiB read then a 64 MiB write, with UCX tag_bw and iperf3 (bench baselines), each under the build lock
O=$1; N=$2; J=$3; A="--buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5"
for r in $(seq 1 $N); do for op in read write; do
  flock /tmp/mori4j-build.lock $R8/b.sh $J $O $op-r$r $A --op-type $op >/dev/null; done; done
