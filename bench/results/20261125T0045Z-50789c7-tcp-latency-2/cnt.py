import sys, collections, bisect
def load(f,side):
    return [(int(t),side,int(w),int(tid)) for t,w,tid,a in (l.split() for l in open(f))]
I=load(sys.argv[1],'I'); T=load(sys.argv[2],'T'); B=128; N=2000
I.sort(); T.sort()
subs=[e for e in I if e[2]==17]
ctid=collections.Counter(e[3] for e in subs).most_common(1)[0][0]
subs=[e for e in subs if e[3]==ctid][:-6][-N*B:]
starts=[subs[k*B][0] for k in range(N)]
allev=sorted(I+T); times=[e[0] for e in allev]
keys=[('I',12),('I',9),('T',12),('T',10),('T',20),('I',5)]
per=collections.defaultdict(list); busyT=[]
for k in range(N-1):
    a,b=starts[k],starts[k+1]
    i0=bisect.bisect_left(times,a); i1=bisect.bisect_left(times,b)
    c=collections.Counter((e[1],e[2]) for e in allev[i0:i1])
    for kk in keys: per[kk].append(c[kk])
    bt=0;hs=None
    for e in allev[i0:i1]:
        if e[1]=='T' and e[2]==10: hs=e[0]
        if e[1]=='T' and e[2]==11 and hs: bt+=e[0]-hs; hs=None
    busyT.append(bt)
import statistics as s
nm={12:'SEL_WAKE',9:'H_INIT',10:'H_TARGET',20:'ACK_WRITE',5:'HAND_OFF'}
for kk in keys: print(kk[0],nm[kk[1]],"mean %.1f median %d"%(s.mean(per[kk]),s.median(per[kk])))
bs=sorted(busyT); print("target in-handler time per iter: p50 %.0f us mean %.0f"%(bs[len(bs)//2]/1e3,s.mean(bs)/1e3))
