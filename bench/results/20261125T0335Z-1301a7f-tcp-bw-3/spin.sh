#!/bin/bash
cd /tmp/t3
./ab.sh /tmp/t3/spin-r 3 "cnt-on:MORI_IO_TCP_BULK_LANES=1" "cnt-onnospin:MORI_IO_TCP_BULK_LANES=1 MORI_IO_POLLER_SPIN=0us MORI_IO_POLLER_YIELD=0us" "cnt-off:MORI_IO_TCP_BULK_LANES=0" -- --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type read --no-baselines > spin-r.out 2>&1
