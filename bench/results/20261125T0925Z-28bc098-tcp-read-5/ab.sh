#!/bin/bash
# usage: ab.sh OUTDIR ROUNDS "NAME=ENV..." ... -- bench args ; each run under the build lock, variants interleaved
O=$1; R=$2; shift 2; V=(); while [ "$1" != "--" ]; do V+=("$1"); shift; done; shift
for r in $(seq 1 $R); do for v in "${V[@]}"; do n=${v%%:*}; e=${v#*:}; J=/tmp/r8/jars/${n%%-*}
  flock /tmp/mori4j-build.lock env $e $R8/b.sh $J $O $n-r$r "$@" >/dev/null; done; done
python3 $R8/tab.py $O
