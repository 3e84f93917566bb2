#!/bin/bash
cd /tmp/t3
./ab.sh /tmp/t3/feed-w 3 "feed-on:MORI_IO_TCP_BULK_LANES=1" "feed-off:MORI_IO_TCP_BULK_LANES=0" -- --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type write --no-baselines > feed-w.out 2>&1
./ab.sh /tmp/t3/feed-r 3 "feed-on:MORI_IO_TCP_BULK_LANES=1" "feed-off:MORI_IO_TCP_BULK_LANES=0" -- --buffer-size 64M --transfer-batch-size 1 --iters 50 --warmup-iters 5 --op-type read --no-baselines > feed-r.out 2>&1
