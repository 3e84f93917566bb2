#!/bin/bash
# sb.sh JARDIR OUTDIR NAME args: b.sh with the thread sampler around it
J=$1; O=$2; N=$3; mkdir -p $O
python3 /tmp/t3/samp.py $O/$N.samp & S=$!
/tmp/t3/b.sh "$@"
kill $S; wait $S 2>/dev/null
