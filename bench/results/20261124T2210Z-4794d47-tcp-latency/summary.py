# summary.py OUTDIR...: one line per run: mori4j p50 / p99 / avg (us), UCX tag_lat and NIO ping-pong p50 of the same
# run, the CPU seconds of both JVMs, and the load average before the run
import json, sys, glob, os, re
for d in sys.argv[1:]:
    loads = dict(re.findall(r'== (\S+) \S+ load (\S+)', open(d + '/load.txt').read())) if os.path.exists(d + '/load.txt') else {}
    print('%-22s %7s %8s %8s | %8s %8s | %-28s | %s' % ('run', 'p50', 'p99', 'avg', 'ucx p50', 'nio p50', 'cpu (both JVMs)', 'load'))
    for f in sorted(glob.glob(d + '/*.json')):
        if f.endswith('.baselines.json'): continue
        n = os.path.basename(f)[:-5]
        r = json.load(open(f))[0]
        base = {}
        if os.path.exists(f[:-5] + '.baselines.json'):
            for b in json.load(open(f[:-5] + '.baselines.json')): base[b['baseline']] = b.get('p50LatUs')
        t = open(f[:-5] + '.time').read().strip().replace('cpu ', '') if os.path.exists(f[:-5] + '.time') else ''
        fmt = lambda v: '%.1f' % v if v is not None else '-'
        print('%-22s %7.1f %8.1f %8.1f | %8s %8s | %-28s | %s' % (n, r['p50LatUs'], r['p99LatUs'], r['avgLatUs'],
              fmt(base.get('ucx-tag_lat')), fmt(base.get('nio-pingpong')), t, loads.get(n, '')))
