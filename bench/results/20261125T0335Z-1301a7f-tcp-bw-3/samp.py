#!/usr/bin/env python3
# samp.py OUT: every 50 ms, for every java process of this user started after this sampler, record per thread:
# time, pid, tid, comm, state, last cpu, utime+stime (ticks); plus /proc/stat per-cpu busy ticks. Stops when told (SIGTERM).
import os, sys, time, signal
out = open(sys.argv[1], 'w'); stop = [False]
signal.signal(signal.SIGTERM, lambda *a: stop.__setitem__(0, True))
me = os.getpid(); seen = set(int(p) for p in os.listdir('/proc') if p.isdigit())
while not stop[0]:
    t = time.time()
    for line in open('/proc/stat'):
        if line.startswith('cpu') and line[3] != ' ':
            f = line.split(); busy = sum(int(x) for x in f[1:4]) + sum(int(x) for x in f[6:9])
            out.write(f"{t:.3f} STAT {f[0]} {busy} {f[4]}\n")
    for p in os.listdir('/proc'):
        if not p.isdigit(): continue
        try: comm = open(f'/proc/{p}/comm').read().strip()
        except OSError: continue
        if comm != 'java': continue
        try: cl = open(f'/proc/{p}/cmdline').read()
        except OSError: continue
        if '/tmp/t3/jars' not in cl: continue
        try: tids = os.listdir(f'/proc/{p}/task')
        except OSError: continue
        for tid in tids:
            try: s = open(f'/proc/{p}/task/{tid}/stat').read()
            except OSError: continue
            r = s.rfind(')'); name = s[s.find('(')+1:r].replace(' ', '_'); f = s[r+2:].split()
            # f[0]=state; utime f[11], stime f[12]; processor = field 39 -> f[36]
            out.write(f"{t:.3f} T {p} {tid} {name} {f[0]} {f[36]} {int(f[11])+int(f[12])}\n")
    out.flush(); time.sleep(0.05)
