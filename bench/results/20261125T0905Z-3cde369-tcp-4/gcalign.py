#!/usr/bin/env python3
# gcalign.py DIR: per run, the slow iterations (> 1.3 x median) and the GC pauses of either JVM that overlap them
import glob, os, re, sys, statistics, datetime
d = sys.argv[1]
def ts(s):
    return datetime.datetime.strptime(s[:23], '%Y-%m-%dT%H:%M:%S.%f').replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 - (0)
for it in sorted(glob.glob(d + '/*.iter'), key=os.path.getmtime):
    name = os.path.basename(it)[:-5]
    rows = [l.split() for l in open(it)]
    starts = [float(r[3]) for r in rows]; lat = [float(r[4]) for r in rows]
    med = statistics.median(lat)
    pauses = []
    for g in glob.glob(f'{d}/gc-{name}-*.log'):
        for l in open(g):
            m = re.match(r'\[(\S+)\] GC\(\d+\) (Pause .*) (\d+\.\d+)ms$', l.strip())
            if m:
                t = m.group(1); off = t[23:]  # +0000
                end = ts(t); dur = float(m.group(3))
                pauses.append((end - dur, end, dur, os.path.basename(g).split('-')[-1][:-4], m.group(2)[:40]))
    m0, m1 = starts[0], starts[-1] + lat[-1] / 1000
    inphase = [p for p in pauses if p[1] >= m0 and p[0] <= m1]
    slow = [i for i, x in enumerate(lat) if x > 1.3 * med]
    hit = 0; lines = []
    for i in slow:
        s0, s1 = starts[i], starts[i] + lat[i] / 1000
        ov = [p for p in pauses if p[1] >= s0 and p[0] <= s1]
        if ov: hit += 1
        lines.append(f'   it {i:3d} {lat[i]/1000:7.2f} ms ' + ('GC ' + ', '.join(f'{p[3]} {p[2]:.1f}ms {p[4]}' for p in ov) if ov else '-'))
    print(f'{name}: median {med/1000:.2f} ms, p99-ish max {max(lat)/1000:.2f} ms, slow(>1.3x) {len(slow)}, of them with a GC pause {hit}; pauses in measured phase: {len(inphase)} sum {sum(p[2] for p in inphase):.1f} ms')
    for l in lines: print(l)
