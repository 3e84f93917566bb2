# usage: slow.py DIR NAME...: for the slowest 10% of transfers (initiator t0 -> last stripe end) against the rest: mean duration,
# mean end of the earlier and of the later stripe (us from t0); says whether a slow transfer is both stripes slow or one stripe late
import sys,glob
d=sys.argv[1]
for name in sys.argv[2:]:
    op=0 if "read" in name else 1; R=[]
    for f in glob.glob(f"{d}/{name}.*.tcp-transfers.txt"):
        for l in open(f):
            if l.startswith("#") or not l.strip(): continue
            v=list(map(int,l.split()))
            if v[0]==0 and v[3]==32<<20 and v[1]==op: R.append((v[5],v[10]))
    R.sort(); g=[]; i=0
    while i+1<len(R):
        if R[i+1][0]-R[i][0]<3e6: g.append((R[i],R[i+1])); i+=2
        else: i+=1
    g=g[5:]; rows=[]
    for a,b in g:
        t0=min(a[0],b[0]); e=sorted([a[1]-t0,b[1]-t0]); rows.append((e[1]/1e3,e[0]/1e3))
    rows.sort(); k=max(1,len(rows)//10); slow=rows[-k:]; rest=rows[:-k]
    m=lambda xs,j: sum(x[j] for x in xs)/len(xs)
    print(f"{name:22s} slowest {k}: dur {m(slow,0):7.0f} earlier stripe {m(slow,1):7.0f} | other {len(rest)}: dur {m(rest,0):7.0f} earlier stripe {m(rest,1):7.0f}")
