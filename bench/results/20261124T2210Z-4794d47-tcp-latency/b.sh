#!/bin/bash
# usage: b.sh JARDIR NAME [bench args...] ; env passes through; prints the table row and load
J=$1; N=$2; shift 2
echo "== $N $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg) env: $(env | grep -E '^MORI_IO_TCP|^JAVA_TOOL' | tr '\n' ' ')"
/usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -jar $J/mori4j-bench-0.1.0-SNAPSHOT.jar bench "$@" > /tmp/t1/out/$N.txt 2>&1
echo "rc=$?"; grep -E '^\| +[0-9]|ucx|nio|tag_lat|pingpong' /tmp/t1/out/$N.txt | head -12
