#!/usr/bin/env python3
"""R7: one table row per run x size from run/*/ratios.txt (bench interleaved ratio lines) and the TcpCallTrace
summaries (calls-*.tcp-calls.txt, both JVMs): GPU/CPU p50, median ratio [min..max], blocking selects ('sleeps') per
transfer, means, on the initiator and the target, GPU row / CPU row.
Usage: python3 summarize.py run"""
import glob, os, re, sys, statistics
root = sys.argv[1] if len(sys.argv) > 1 else 'run'
SIZES = {'1 MiB': 1048576, '2 MiB': 2097152, '4 MiB': 4194304}
rows, per = [], {}
for d in sorted(glob.glob(os.path.join(root, '*-*-gpu-gpu-*'))):
    if not os.path.isdir(d): continue
    name = os.path.basename(d)
    setting, op, rep = re.match(r'(\w+?)-(write|read)-gpu-gpu-(\d+)', name).groups()
    rat = {}
    for line in open(os.path.join(d, 'ratios.txt')):
        m = re.match(r'\s+(\d MiB) x 1: gpu/cpu (\d+)% \[(\d+)%\.\.(\d+)%\].*p50 latency gpu ([\d.]+) us, cpu ([\d.]+) us', line)
        if m: rat[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4), float(m.group(5)), float(m.group(6)))
    tr = {}
    for f in glob.glob(os.path.join(d, 'calls-*.tcp-calls.txt')):
        for line in open(f):
            if line.startswith("#") or "|" not in line or line.startswith("side"): continue
            parts = line.split('|')
            h = parts[0].split()
            side, o, kind, size = h[0], h[1], h[2], int(h[3])
            tail = parts[3].split()
            tr[(side, o, kind, size)] = (float(tail[3].split('[')[0]), float(tail[4].split('[')[0]))
    for s, b in SIZES.items():
        if s not in rat: continue
        r = rat[s]
        g = lambda side, kind, i: tr.get((side, op, kind, b), (float('nan'),) * 2)[i]
        rows.append((setting, op, rep, s, r[4], r[3], r[0], r[1], r[2],
                     g('init', 'gpu', 0), g('init', 'cpu', 0), g('targ', 'gpu', 0), g('targ', 'cpu', 0),
                     g('init', 'gpu', 1), g('init', 'cpu', 1)))
        per.setdefault((setting, op, s), []).append(r)
print('| setting | op | run | size | CPU p50 us | GPU p50 us | ratio median [min..max] | init sleeps GPU / CPU | targ sleeps GPU / CPU |')
print('|---|---|---|---|---|---|---|---|---|')
order = {'y20': 0, 'y100': 1, 'y300': 2, 's150': 3}
for r in sorted(rows, key=lambda r: (r[1] != 'write', r[3], order.get(r[0], 9), r[2])):
    print(f'| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.0f} | {r[5]:.0f} | {r[6]}% [{r[7]}..{r[8]}] | '
          f'{r[9]:.2f} / {r[10]:.2f} | {r[11]:.2f} / {r[12]:.2f} |')
print()
print('| setting | op | size | runs | ratio medians (per run) | median of them | GPU p50 median us | CPU p50 median us |')
print('|---|---|---|---|---|---|---|---|')
for (st, op, s), rs in sorted(per.items(), key=lambda kv: (kv[0][1] != 'write', kv[0][2], order.get(kv[0][0], 9))):
    print(f'| {st} | {op} | {s} | {len(rs)} | {", ".join(str(r[0]) for r in rs)} | {statistics.median(r[0] for r in rs):g}% | '
          f'{statistics.median(r[3] for r in rs):.0f} | {statistics.median(r[4] for r in rs):.0f} |')
