#!/bin/bash
cd /tmp/t3
./ab.sh /tmp/t3/fin-bwr 2 "bulk-on:X=1" "bulk-off:MORI_IO_TCP_BULK_LANES=0" -- --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type read > fin-bwr.out 2>&1
./ab.sh /tmp/t3/fin-d128 3 "bulk-on:X=1" "bulk-off:MORI_IO_TCP_BULK_LANES=0" -- --no-baselines > fin-d128.out 2>&1
