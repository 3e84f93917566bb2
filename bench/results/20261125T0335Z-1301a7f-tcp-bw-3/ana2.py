#!/usr/bin/env python3
# ana2.py SAMP [seconds]: timeline of the last seconds: per 50-ms sample, the busiest threads' cpu and tick delta
import sys, collections
fn = sys.argv[1]; last = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
rows = [l.split() for l in open(fn)]
T = [r for r in rows if r[1] == 'T']; S = [r for r in rows if r[1] == 'STAT']
tend = float(T[-1][0])
hist = collections.defaultdict(list)
for r in T: hist[(r[2], r[3], r[4])].append((float(r[0]), r[6], int(r[7]), r[5]))
def delta(k, t0, t1):
    h = [x for x in hist[k] if t0 <= x[0] <= t1]
    return (h[-1][2] - h[0][2]) if len(h) > 1 else 0
win = (tend - last, tend)
top = sorted(hist, key=lambda k: -delta(k, *win))[:5]
print(fn, 'top threads in the last %.1f s:' % last, [(k[0], k[2], delta(k, *win)) for k in top])
stat = collections.defaultdict(dict)
for r in S: stat[round(float(r[0]), 2)][r[2]] = int(r[3])
ts = sorted(set(round(x[0], 2) for k in top for x in hist[k] if x[0] >= win[0]))
prev = {}
for t in ts:
    line = [f"{t - tend:6.2f}"]
    for k in top:
        x = next((x for x in hist[k] if round(x[0], 2) == t), None)
        if x is None: line.append('   -   '); continue
        d = x[2] - prev.get(k, x[2]); prev[k] = x[2]
        line.append(f"c{x[1]}{x[3]}+{d:<2d}")
    st = stat.get(t, {})
    line.append(' busy ' + ' '.join(f"{c}:{st.get(c, 0) - prev.get(c, st.get(c, 0))}" for c in ('cpu0', 'cpu1')))
    for c in ('cpu0', 'cpu1'):
        if c in st: prev[c] = st[c]
    print(' '.join(line))
