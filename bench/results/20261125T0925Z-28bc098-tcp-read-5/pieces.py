# usage: pieces.py DIR NAME...: for dealt transfers (4 MiB pieces) and fixed stripes alike: groups the initiator's records of
# one 64 MiB transfer (a transfer starts once every earlier record has ended; reads: the target's records, since the initiator's tally of a
# connection closes a piece early when the next piece's request is prepared while it is still arriving), then per transfer the difference between the
# two loop threads' last ends, and the pieces each thread carried; percentiles in us
import sys,glob
d=sys.argv[1]
for name in sys.argv[2:]:
    op=0 if "read" in name else 1; R=[]
    for f in glob.glob(f"{d}/{name}.*.tcp-transfers.txt"):
        for l in open(f):
            if l.startswith("#") or not l.strip(): continue
            v=list(map(int,l.split()))
            if v[0]==(1 if op==0 else 0) and v[1]==op and v[3]>=4<<20: R.append((v[5],v[10],v[4],v[3]))
    R.sort(); g=[]; cur=[]; end=0
    for r in R:
        if cur and r[0]>end: g.append(cur); cur=[]
        cur.append(r); end=max(end,r[1]) if cur[:-1] else r[1]
    if cur: g.append(cur)
    g=[x for x in g if sum(r[3] for r in x)==64<<20][5:]
    diffs=[];dur=[];share=[]
    for x in g:
        th={}
        for r in x: th.setdefault(r[2],[]).append(r)
        if len(th)!=2: continue
        ends=sorted(max(r[1] for r in v) for v in th.values()); t0=min(r[0] for r in x)
        diffs.append((ends[1]-ends[0])/1e3); dur.append((ends[1]-t0)/1e3); share.append(max(len(v) for v in th.values()))
    q=lambda v,p: sorted(v)[int(len(v)*p)] if v else float('nan')
    print(f"{name:16s} {len(diffs)} transfers: lane end difference p50 {q(diffs,.5):6.0f} p90 {q(diffs,.9):6.0f} mean {sum(diffs)/max(1,len(diffs)):6.0f} | dur p50 {q(dur,.5):6.0f} p90 {q(dur,.9):6.0f} | records on the busier thread p50 {q(share,.5)} max {max(share) if share else 0}")
