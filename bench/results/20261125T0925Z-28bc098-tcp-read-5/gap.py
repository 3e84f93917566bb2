# usage: gap.py DIR NAME: per 64 MiB transfer (stripes grouped by start), the initiator's gap from its end to the next transfer's start
# and from its start to its first request write (stamps of DIR/NAME.*.tcp-transfers.txt)
import sys,glob
d,name=sys.argv[1],sys.argv[2]
for f in glob.glob(f"{d}/{name}.*.tcp-transfers.txt"):
    R=[list(map(int,l.split())) for l in open(f).read().split("\n") if l and not l.startswith("#")]
    R=[v[:2]+[v[4]]+[v[3]]+v[5:] for v in R]  # -> side write thread bytes t0 ...
    R=[r for r in R if r[3]==32<<20 and r[0]==0]
    if not R: continue
    R.sort(key=lambda r:r[4])
    # group into transfers by t0 within 3 ms
    g=[];cur=[R[0]]
    for r in R[1:]:
        if r[4]-cur[0][4]<3e6: cur.append(r)
        else: g.append(cur);cur=[r]
    g.append(cur)
    gaps=sorted((g[i+1][0][4]-max(x[9] for x in g[i]))/1e3 for i in range(len(g)-1))
    fw=sorted((min(x[5] for x in t if x[5])-t[0][4])/1e3 for t in g if any(x[5] for x in t))
    print(name,"transfers",len(g),"gap end->next t0 us p10 %.0f p50 %.0f p90 %.0f"%(gaps[len(gaps)//10],gaps[len(gaps)//2],gaps[len(gaps)*9//10]),
          "| t0->first request write p10 %.0f p50 %.0f p90 %.0f"%(fw[len(fw)//10],fw[len(fw)//2],fw[len(fw)*9//10]))
