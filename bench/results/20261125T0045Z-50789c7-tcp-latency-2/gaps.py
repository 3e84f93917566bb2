import sys, collections, bisect
names={1:'SEND',2:'DRIVE_START',3:'DRIVE_DONE',4:'DRIVE_BACK',5:'HAND_OFF',6:'TIMER_BACK',7:'COMPLETE',8:'LOOP_SUBMIT',9:'H_INIT',10:'H_TARGET',11:'H_END',12:'SEL_WAKE',13:'SEL_SLEEP',14:'TB_WAKE',15:'DEFER',16:'H_SKIP',17:'SUBMIT',18:'WRITE_BEGIN',19:'DRIVE_EXIT',20:'ACK_WRITE'}
def load(f,side):
    return [(int(t),side,int(w),int(tid),int(a)) for t,w,tid,a in (l.split() for l in open(f))]
I=load(sys.argv[1],'I'); T=load(sys.argv[2],'T')
B=int(sys.argv[3]); N=int(sys.argv[4]); trail=int(sys.argv[5])
I.sort(); T.sort()
subs=[e for e in I if e[2]==17]
ctid=collections.Counter(e[3] for e in subs).most_common(1)[0][0]
subs=[e for e in subs if e[3]==ctid][:-trail or None][-N*B:]
starts=[subs[k*B][0] for k in range(N)]
allev=sorted(I+T); times=[e[0] for e in allev]
cats=collections.Counter(); tot=collections.Counter()
durs=[]
for k in range(N-1):
    a,b=starts[k],starts[k+1]; durs.append(b-a)
    i0=bisect.bisect_left(times,a); i1=bisect.bisect_left(times,b)
    prev=a; pe=None
    for e in allev[i0:i1+1]:
        g=e[0]-prev
        if g>200000:
            key="%s %s -> %s %s"%(pe[1] if pe else '-',names.get(pe[2]) if pe else '-',e[1],names.get(e[2]))
            cats[key]+=1; tot[key]+=g
        prev=e[0]; pe=e
ds=sorted(durs)
print("iters",len(ds),"p50 %.0f p99 %.0f; >1ms: %d; >0.6ms: %d"%(ds[len(ds)//2]/1e3,ds[int(len(ds)*.99)]/1e3,sum(d>1e6 for d in ds),sum(d>6e5 for d in ds)))
for k,c in cats.most_common(15): print("%5d %8.0f us  %s"%(c,tot[k]/1e3,k))
