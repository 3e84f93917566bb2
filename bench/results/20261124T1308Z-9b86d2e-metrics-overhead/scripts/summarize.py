import json, glob, math, re, statistics, sys, os
d=sys.argv[1]
T95={1:12.706,2:4.303,3:3.182,4:2.776,5:2.571,6:2.447,7:2.365,8:2.306,9:2.262,10:2.228,11:2.201,12:2.179,13:2.160,14:2.145,15:2.131,19:2.093,23:2.069}
def t(n): return T95.get(n, 2.0)
scores={}
for f in sorted(glob.glob(os.path.join(d,'r*-*.json'))):
    m=re.match(r'r(\d+)-(\w+)\.json',os.path.basename(f))
    r,v=int(m.group(1)),m.group(2)
    try: j=json.load(open(f))
    except Exception: continue
    if not j: continue
    scores.setdefault(v,{})[r]=j[0]['primaryMetric']['score']
def ci(xs):
    n=len(xs); m=statistics.mean(xs)
    if n<2: return m,float('nan')
    return m, t(n-1)*statistics.stdev(xs)/math.sqrt(n)
print("| metrics | forks | mean us/op | 95% CI | min | max |")
print("| --- | --- | --- | --- | --- | --- |")
for v in ['off','counters','prometheus']:
    if v not in scores: continue
    xs=list(scores[v].values()); m,h=ci(xs)
    print(f"| {v} | {len(xs)} | {m:.2f} | ± {h:.2f} | {min(xs):.2f} | {max(xs):.2f} |")
print()
print("| paired by round (same round, rotating order) | rounds | mean difference vs off | 95% CI | as % of off |")
print("| --- | --- | --- | --- | --- |")
for v in ['counters','prometheus']:
    if v not in scores or 'off' not in scores: continue
    rs=sorted(set(scores[v])&set(scores['off']))
    diffs=[scores[v][r]-scores['off'][r] for r in rs]
    m,h=ci(diffs); base=statistics.mean(scores['off'][r] for r in rs)
    print(f"| {v} - off | {len(rs)} | {m:+.2f} us | ± {h:.2f} us | {100*m/base:+.1f}% (CI {100*(m-h)/base:+.1f}% .. {100*(m+h)/base:+.1f}%) |")
print()
print("per round (us/op):", {v:{r:round(x,2) for r,x in sorted(s.items())} for v,s in scores.items()})
