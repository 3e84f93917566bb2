#!/bin/bash
# psab.sh OUTDIR ROUNDS "NAME|TARGET_ENV|INIT_ENV" ... -- bench args: interleaved, each run under the build lock
O=$1; R=$2; shift 2; V=(); while [ "$1" != "--" ]; do V+=("$1"); shift; done; shift
for r in $(seq 1 $R); do for v in "${V[@]}"; do IFS='|' read n te ie <<< "$v"; J=/tmp/t3/jars/${n%%-*}
  flock /tmp/mori4j-build.lock /tmp/t3/ps.sh $J $O $n-r$r "$te" "$ie" "$@"; done; done
python3 /tmp/t3/tab.py $O
