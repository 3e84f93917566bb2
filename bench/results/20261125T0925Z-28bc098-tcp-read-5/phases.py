# usage: phases.py DIR NAME...: one line per traced run: bench p50/avg, and per transfer (medians, us from the initiator's t0):
# half%: mean |stripe end difference|/2 over the mean duration, i.e. what a perfect balance of the two stripes would have saved at most
# request/first payload write, target start (request checked, or write header read), first data written by the target (reads),
# initiator end, gap to the next transfer, stripe end difference p50/p90
import sys,glob,json,os
d=sys.argv[1]
def recs(name):
    R=[]
    for f in glob.glob(f"{d}/{name}.*.tcp-transfers.txt"):
        for l in open(f):
            if l.startswith("#") or not l.strip(): continue
            v=list(map(int,l.split()))
            R.append(dict(zip("side write kind bytes thread t0 fw lw fr lr end wc rc ww wr sl y".split(),v)))
    return R
def group(rs):
    rs=sorted(rs,key=lambda r:r['t0']); g=[]; cur=[]
    for r in rs:
        if cur and r['t0']-cur[0]['t0']<3e6: cur.append(r)
        else:
            if cur: g.append(cur)
            cur=[r]
    if cur: g.append(cur)
    return [x for x in g if len(x)==2]
med=lambda v: sorted(v)[len(v)//2] if v else float('nan')
p90=lambda v: sorted(v)[len(v)*9//10] if v else float('nan')
print("%-22s %6s %6s | %6s %6s %6s %7s %6s | %6s %6s %7s %6s"%("run","p50ms","avgGB","reqW","tStart","tFirstW","iEnd","gap","dEnd50","dEnd90","meanDur","half%"))
for name in sys.argv[2:]:
    op=0 if "read" in name else 1
    R=[r for r in recs(name) if r['bytes']==32<<20 and r['write']==op]
    I=group([r for r in R if r['side']==0])[5:]; T=group([r for r in R if r['side']==1])
    tst=[];tfw=[];fw=[];ie=[];gap=[];de=[]
    for k,t in enumerate(I):
        t0=min(x['t0'] for x in t); end=max(x['end'] for x in t)
        fw.append((min(x['fw'] for x in t if x['fw']) - t0)/1e3); ie.append((end-t0)/1e3)
        de.append(abs(t[0]['end']-t[1]['end'])/1e3)
        if k+1<len(I): gap.append((min(x['t0'] for x in I[k+1])-end)/1e3)
        tt=[p for p in T if t0<min(x['t0'] for x in p)<t0+5e6]
        if tt:
            tst.append((min(x['t0'] for x in tt[0])-t0)/1e3)
            if op==0: tfw.append((min(x['fw'] for x in tt[0] if x['fw'])-t0)/1e3)
    js=f"{d}/{name}.json"; b=json.load(open(js))[0] if os.path.exists(js) else {}
    print("%-22s %6.2f %6.2f | %6.0f %6.0f %6.0f %7.0f %6.0f | %6.0f %6.0f %7.0f %5.1f%%"%(name,b.get('p50LatUs',0)/1e3,b.get('avgBwGBps',0),med(fw),med(tst),med(tfw),med(ie),med(gap),med(de),p90(de),sum(ie)/len(ie),100*sum(de)/2/sum(ie)))
