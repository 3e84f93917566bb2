#!/usr/bin/env bash
# P3: host cost of a batch call. Usage: bash .device/p3.sh <label>
r=$OUT/$1; mkdir -p $r
nproc > $r/machine.txt; lscpu | head -20 >> $r/machine.txt; nvidia-smi -L >> $r/machine.txt 2>&1
timeout 150 bash .device/run.sh org.openjdk.jmh.Main 'XgmiBatchHostBenchmark|TcpBatchCallBenchmark' -wi 3 -w 2 -i 5 -r 2 -prof gc > $r/jmh.txt 2>&1
echo "jmh rc $?" >> $r/jmh.txt
timeout 60 bash .device/run.sh org.openjdk.jmh.Main 'XgmiBatchHostBenchmark.toLaunch' -wi 2 -w 2 -i 3 -r 2 -prof 'stack:lines=3;top=30' > $r/stack.txt 2>&1
echo "stack rc $?" >> $r/stack.txt
