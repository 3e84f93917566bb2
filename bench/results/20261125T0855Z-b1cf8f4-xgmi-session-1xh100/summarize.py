#!/usr/bin/env python3
"""Tables for README.md from call*/: the bench's lat-4k rows beside their raw baseline, and SingleCopyProbe's parts."""
import glob, json, os, re, statistics
here = os.path.dirname(os.path.abspath(__file__))
print("| call | run | caller-poll | await-spin | processes | engine p50 / avg / p99 (us) | raw copy+sync p50 / avg / p99 (us) | ratio p50 |")
print("|---|---|---|---|---|---|---|---|")
for call in sorted(glob.glob(os.path.join(here, "call*"))):
    for js in sorted(glob.glob(os.path.join(call, "*.json"))):
        if js.endswith(".baselines.json"): continue
        name = os.path.basename(js)[:-5]
        row = json.load(open(js))[0]
        base = [b for b in json.load(open(js[:-5] + ".baselines.json")) if "4 KiB + sync" in b["series"]][0]
        head = open(js[:-5] + ".txt").readline()
        poll = re.search(r"CALLER_POLL=(\S+)", head).group(1)
        spin = re.search(r"AWAIT_SPIN=(\S+)", head)
        print(f"| {os.path.basename(call)} | {name} | {poll} | {spin.group(1) if spin else 'auto (50 us)'} | {'two' if name.startswith('tp') else 'one'} "
              f"| {row['p50LatUs']:.2f} / {row['avgLatUs']:.2f} / {row['p99LatUs']:.2f} | {base['p50LatUs']:.2f} / {base['avgLatUs']:.2f} / {base['p99LatUs']:.2f} "
              f"| {row['p50LatUs'] / base['p50LatUs']:.2f}x |")
print()
print("| call | mode | total p50 / p90 / p99 (us), per round | copy call p50 | record p50 | seen p50 | hand-off in / back p50 |")
print("|---|---|---|---|---|---|---|")
for call in sorted(glob.glob(os.path.join(here, "call*"))):
    rows = {}
    for line in open(os.path.join(call, "probe.tsv")):
        f = line.rstrip("\n").split("\t")
        if len(f) != 8 or f[0].startswith("#"): continue
        rows.setdefault((f[0], f[2]), []).append((float(f[4]), float(f[5]), float(f[6])))
    for mode in ["sync", "self", "worker", "caller-issue"]:
        tot = "; ".join(f"{a:.2f} / {b:.2f} / {c:.2f}" for a, b, c in rows[(mode, "total")])
        med = lambda part: f"{statistics.median(r[0] for r in rows[(mode, part)]):.2f}" if (mode, part) in rows else "-"
        print(f"| {os.path.basename(call)} | {mode} | {tot} | {med('copy')} | {med('record')} | {med('seen')} | {med('in')} / {med('back')} |")
