import sys,glob,statistics as st
# usage: stripes.py DIR NAME: pairs the two stripes (one per loop thread) of each 32+32 MiB transfer in DIR/NAME.*.tcp-transfers.txt
# (MORI4J_TCP_CALL_TRACE=DIR/NAME, both JVMs; nanoTime is one clock for both) and prints percentiles in us from the transfer's
# start at the initiator (t0 of its first stripe): i* initiator, t* target, Reg/Bulk = the lower/higher thread id of that JVM
d,name=sys.argv[1],sys.argv[2]
recs=[]
for f in glob.glob(f"{d}/{name}.*.tcp-transfers.txt"):
    for l in open(f).read().split("\n")[1:]:
        if not l: continue
        if l.startswith("#"): continue
        v=list(map(int,l.split())); v=v[:2]+[v[4]]+[v[3]]+v[5:]  # -> side write thread bytes t0 ...
        if v[3]!=32<<20 or v[1]!=(0 if "read" in name else 1): continue
        recs.append(dict(zip("side write bulk bytes t0 fw lw fr lr end wc rc ww wr sl y".split(),v)))
tids={}
for r in recs: tids.setdefault(r['side'],set()).add(r['bulk'])
for r in recs: r['bulk']=0 if r['bulk']==min(tids[r['side']]) else 1
print('threads', {k:sorted(v) for k,v in tids.items()})
init=sorted([r for r in recs if r['side']==0],key=lambda r:r['t0'])
targ=sorted([r for r in recs if r['side']==1],key=lambda r:r['t0'])
def pairs(rs):
    out=[];i=0
    while i+1<len(rs):
        a,b=rs[i],rs[i+1]
        if abs(a['t0']-b['t0'])<3e6 and a['bulk']!=b['bulk']:
            out.append((a,b) if a['bulk']==0 else (b,a)); i+=2
        else: i+=1
    return out
ip=pairs(init); tp=pairs(targ)
print(f"{name}: {len(ip)} transfers (initiator), {len(tp)} (target)")
rows=[]
for (r,b) in ip[5:]:
    t0=min(r['t0'],b['t0'])
    # matching target records: first pair whose t0 lies after t0
    tt=[p for p in tp if p[0]['t0']>t0 and p[0]['t0']<t0+5e6]
    row=dict(iFW=(min(r['fw'] or 1e30,b['fw'] or 1e30)-t0)/1e3, iFR=(min(r['fr'] or 1e30,b['fr'] or 1e30)-t0)/1e3, dur=(max(r['end'],b['end'])-t0)/1e3, regEnd=(r['end']-t0)/1e3, bulkEnd=(b['end']-t0)/1e3, startSkew=(b['t0']-r['t0'])/1e3,
             rcR=r['rc'],rcB=b['rc'],wrR=r['wr'],wrB=b['wr'],slR=r['sl'],slB=b['sl'])
    if tt:
        tr,tb=tt[0]
        row.update(tRegStart=(tr['t0']-t0)/1e3,tBulkStart=(tb['t0']-t0)/1e3,tRegFW=(tr['fw']-t0)/1e3 if tr['fw'] else -1,tBulkFW=(tb['fw']-t0)/1e3 if tb['fw'] else -1,
                   tRegEnd=(tr['end']-t0)/1e3,tBulkEnd=(tb['end']-t0)/1e3,twcR=tr['wc'],twcB=tb['wc'],trcR=tr['rc'],trcB=tb['rc'],tslR=tr['sl'],tslB=tb['sl'])
    rows.append(row)
keys=list(rows[0].keys())
for k in keys:
    v=sorted(x[k] for x in rows if k in x)
    print(f"  {k:10s} p10 {v[len(v)//10]:9.1f} p50 {v[len(v)//2]:9.1f} p90 {v[len(v)*9//10]:9.1f} max {v[-1]:9.1f}")
gap=sorted(abs(x['regEnd']-x['bulkEnd']) for x in rows)
print("  |regEnd-bulkEnd| p50 %.1f p90 %.1f; bulk later in %d of %d"%(gap[len(gap)//2],gap[len(gap)*9//10],sum(x['bulkEnd']>x['regEnd'] for x in rows),len(rows)))
