#!/usr/bin/env python3
# tana.py TRACE...: the target's last 30,000 served events: how many select sleeps per request, the time from
# the handle's start to its ack write and to the handle's end, and the gap between requests
import sys, collections, statistics
for fn in sys.argv[1:]:
    ev = [tuple(int(x) for x in l.split()) for l in open(fn) if l.strip()]
    ev.sort()
    idx = [i for i, e in enumerate(ev) if e[1] == 10]
    if len(idx) < 31000: print(fn, 'only', len(idx), 'handles'); continue
    start = idx[-30000]
    tail = ev[start:]
    c = collections.Counter(e[1] for e in tail)
    h = [e[0] for e in tail if e[1] == 10]
    gaps = [b - a for a, b in zip(h, h[1:])]
    ack = []; end = []; last = None
    for e in tail:
        if e[1] == 10: last = e[0]
        elif e[1] == 20 and last: ack.append(e[0] - last)
        elif e[1] == 11 and last: end.append(e[0] - last); last = None
    q = lambda v, p: sorted(v)[int(len(v) * p)] / 1000
    print(f"{fn.split('/')[-1]}: per request: select sleeps {c[13]/30000:.2f}, wakes {c[12]/30000:.2f}; gap p50 {q(gaps,.5):.1f} us p90 {q(gaps,.9):.1f}; handle->ack p50 {q(ack,.5):.2f} us; handle->end p50 {q(end,.5):.2f} us; events {dict(c)}")
