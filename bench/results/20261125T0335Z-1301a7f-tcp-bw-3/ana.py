#!/usr/bin/env python3
# ana.py SAMPFILE...: per run, the threads that used most CPU (ticks), their CPUs over the samples, and how often the
# top threads of the two processes sat on the same CPU; plus CPU busy not accounted to our two JVMs
import sys, collections
for fn in sys.argv[1:]:
    rows = [l.split() for l in open(fn)]
    T = [r for r in rows if r[1] == 'T']
    if not T: print(fn, 'no samples'); continue
    pids = sorted(set(r[2] for r in T), key=int)
    first, last, cpus, names = {}, {}, collections.defaultdict(list), {}
    for r in T:
        k = (r[2], r[3]); names[k] = r[4]
        first.setdefault(k, (float(r[0]), int(r[7]))); last[k] = (float(r[0]), int(r[7]))
        cpus[k].append((float(r[0]), r[6], r[5]))
    used = {k: last[k][1] - first[k][1] for k in last}
    top = sorted(used, key=lambda k: -used[k])[:6]
    print(f"== {fn}: pids {pids} (first = initiator)")
    for k in top:
        c = collections.Counter(x[1] for x in cpus[k]); st = collections.Counter(x[2] for x in cpus[k])
        print(f"  pid {k[0]} {names[k]:<16} ticks {used[k]:4d} cpus {dict(c)} states {dict(st)}")
    # co-location of the two busiest threads of different processes
    a = next((k for k in top if k[0] == pids[0]), None); b = next((k for k in top if len(pids) > 1 and k[0] == pids[1]), None)
    if a and b:
        ca = {round(t, 2): c for t, c, s in cpus[a]}; cb = {round(t, 2): c for t, c, s in cpus[b]}
        both = [t for t in ca if t in cb]; same = sum(1 for t in both if ca[t] == cb[t])
        print(f"  busiest of each: {names[a]} / {names[b]}: same cpu in {same}/{len(both)} samples")
    S = [r for r in rows if r[1] == 'STAT']
    if S:
        t0, t1 = float(S[0][0]), float(S[-1][0])
        busy = collections.defaultdict(list)
        for r in S: busy[r[2]].append(int(r[3]))
        tot = sum(v[-1] - v[0] for v in busy.values())
        ours = sum(last[k][1] - first[k][1] for k in last)
        print(f"  {t1-t0:.1f} s: all cpus busy {tot} ticks, our JVM threads {ours} ticks, others ~{tot-ours}")
