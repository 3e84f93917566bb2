# summary.py [DIR]: per run of this folder, each round's mori4j row (p50/p99 us, avg GB/s) with the UCX/iperf3/NIO
# figures of the same round (from NAME.json and NAME.baselines.json, both with "round"), then the paired ratios of
# NAME.paired.json. Reads only what bench --rounds --json wrote.
import json, os, sys
d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
for name in ["default-row", "64m-write", "64m-read", "4k-sess-write", "4k-sess-read", "4k-sess-write-2", "4k-sess-read-2"]:
    p = os.path.join(d, name + ".json")
    if not os.path.exists(p):
        continue
    rows = json.load(open(p))
    base = json.load(open(os.path.join(d, name + ".baselines.json")))
    print(f"== {name}")
    for r in rows:
        b = {x["baseline"]: x for x in base if x["round"] == r["round"]}
        def f(k, key):
            v = b.get(k, {}).get(key)
            return "-" if v is None else f"{v:.2f}"
        print(f"  round {r['round']}: p50 {r['p50LatUs']:.2f} p99 {r['p99LatUs']:.2f} us, avg {r['avgBwGBps']:.2f} GB/s"
              f" | ucx tag_lat p50 {f('ucx-tag_lat', 'p50LatUs')}, tag_bw {f('ucx-tag_bw', 'avgBwGBps')}, iperf3 {f('iperf3', 'avgBwGBps')},"
              f" nio-stream {f('nio-stream', 'avgBwGBps')} GB/s p50 {f('nio-stream', 'p50LatUs')}, pingpong p50 {f('nio-pingpong', 'p50LatUs')}")
    for q in json.load(open(os.path.join(d, name + ".paired.json"))):
        fmt = (lambda v: "-" if v is None else f"{100*v:.0f}%") if q["better"] == "higher" else (lambda v: "-" if v is None else f"{v:.3f}x")
        print(f"  paired vs {q['baseline']}: median {fmt(q['median'])} [{fmt(q['min'])}..{fmt(q['max'])}], at or better in "
              f"{q['atOrBetter']} of {q['roundsUsed']} (rounds {q['rounds']}); per round {', '.join(fmt(v) for v in q['ratios'])}")
