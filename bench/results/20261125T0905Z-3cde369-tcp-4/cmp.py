#!/usr/bin/env python3
# cmp.py DIR...: each run's row beside the baselines of the same run
import json, glob, os, sys
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + '/*.json'), key=os.path.getmtime):
        if f.endswith('baselines.json'): continue
        r = json.load(open(f))[0]; b = {}
        bf = f[:-5] + '.baselines.json'
        if os.path.exists(bf):
            for x in json.load(open(bf)): b[x['baseline']] = x
        name = os.path.basename(f)[:-5]
        if r['msgSize'] >= 1 << 20:
            u = b.get('ucx-tag_bw', {}).get('avgBwGBps'); i = b.get('iperf3', {}).get('avgBwGBps')
            s = f"{name:<16} avg {r['avgBwGBps']:.2f} GB/s p50 {r['p50LatUs']/1000:.2f} ms (= {r['msgSize']/r['p50LatUs']/1e3:.2f} GB/s) p99 {r['p99LatUs']/1000:.1f} ms"
            if u: s += f" | ucx tag_bw {u:.2f} ({100*r['avgBwGBps']/u:.0f}%) iperf3 {i:.2f} ({100*r['avgBwGBps']/i:.0f}%)"
        else:
            u = b.get('ucx-tag_lat', {}).get('p50LatUs')
            s = f"{name:<16} {r['msgSize']}x{r['batchSize']} p50 {r['p50LatUs']:.1f} us p99 {r['p99LatUs']:.1f} avg {r['avgLatUs']:.1f}"
            if u: s += f" | ucx tag_lat p50 {u:.2f}"
        print(s)
