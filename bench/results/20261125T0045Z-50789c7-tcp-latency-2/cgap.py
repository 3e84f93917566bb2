import sys, collections
def load(f):
    return [(int(t),int(w),int(tid)) for t,w,tid,a in (l.split() for l in open(f))]
for f in sys.argv[1:]:
    ev=sorted(load(f)); g=[]
    for a,b in zip(ev,ev[1:]):
        if a[1]==7 and b[1]==7 and a[2]==b[2]: g.append(b[0]-a[0])
    g.sort(); n=len(g)
    print(f, n, "p50 %.2f p90 %.2f p99 %.2f us; >2us %.1f%%; sum>2us %.0f ms"%(g[n//2]/1e3,g[int(n*.9)]/1e3,g[int(n*.99)]/1e3,100*sum(x>2000 for x in g)/n, sum(x for x in g if x>2000)/1e6))
