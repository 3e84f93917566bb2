#!/bin/bash
# seg.sh JARDIR OUT NAME args: TCP segment counters (nstat deltas) around one bench run
J=$1; O=$2; N=$3; shift 3; mkdir -p $O
nstat -n >/dev/null
$T4/b.sh $J $O $N "$@" > /dev/null
nstat 2>/dev/null > $O/$N.nstat
