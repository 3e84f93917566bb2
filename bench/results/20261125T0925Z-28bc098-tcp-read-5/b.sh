#!/bin/bash
# usage: b.sh JARDIR OUTDIR NAME [bench args...] ; env passes through; prints the table rows and load
J=$1; O=$2; N=$3; shift 3; mkdir -p $O
{ echo "== $N $(date -u +%H:%M:%S) load $(cut -d" " -f1-3 /proc/loadavg) env: $(env | grep -E "^MORI_IO_TCP|^JAVA_TOOL" | tr "\n" " ")"; ps -eo pcpu,comm --sort=-pcpu | sed -n 2,3p | tr "\n" ";"; echo; } | tee -a $O/load.txt
/usr/bin/time -f "cpu user %U sys %S wall %e" -o $O/$N.time /usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench "$@" --json $O/$N.json > $O/$N.txt 2>&1
echo "rc=$? $(cat $O/$N.time)" | tee -a $O/load.txt; grep -E '^\| +[0-9]|ucx|nio|tag_|pingpong|iperf' $O/$N.txt | head -14
