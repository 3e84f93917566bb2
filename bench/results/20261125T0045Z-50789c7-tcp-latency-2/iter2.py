import sys, collections
# usage: iter.py INIT.trace TARGET.trace BATCH ITERS TRAILING
names={1:'SEND',2:'DRIVE_START',3:'DRIVE_DONE',4:'DRIVE_BACK',5:'HAND_OFF',6:'TIMER_BACK',7:'COMPLETE',8:'LOOP_SUBMIT',9:'H_INIT',10:'H_TARGET',11:'H_END',12:'SEL_WAKE',13:'SEL_SLEEP',14:'TB_WAKE',15:'DEFER',16:'H_SKIP',17:'SUBMIT',18:'WRITE_BEGIN',19:'DRIVE_EXIT',20:'ACK_WRITE'}
def load(f,side):
    ev=[]
    for l in open(f):
        t,w,tid,a=l.split(); ev.append((int(t),side,int(w),int(tid),int(a)))
    return ev
I=load(sys.argv[1],'I'); T=load(sys.argv[2],'T')
B=int(sys.argv[3]); N=int(sys.argv[4]); trail=int(sys.argv[5])
I.sort(); T.sort()
subs=[e for e in I if e[2]==17]
ctid=collections.Counter(e[3] for e in subs).most_common(1)[0][0]
subs=[e for e in subs if e[3]==ctid]
subs=subs[:len(subs)-trail]
subs=subs[-N*B:]
starts=[subs[k*B][0] for k in range(N)]
d=[(starts[k+1]-starts[k],k) for k in range(N-1)]
ds=sorted(x for x,_ in d)
print("iters",len(d),"p50 %.1f p90 %.1f p99 %.1f max %.1f us"%(ds[len(ds)//2]/1e3,ds[int(len(ds)*.9)]/1e3,ds[int(len(ds)*.99)]/1e3,ds[-1]/1e3))
# per-iteration breakdown: submit phase duration (first->last submit), then last submit -> next start
sp=[(subs[k*B+B-1][0]-subs[k*B][0]) for k in range(N-1)]
sps=sorted(sp); print("submit phase p50 %.1f p99 %.1f"%(sps[len(sps)//2]/1e3,sps[int(len(sps)*.99)]/1e3))
allev=sorted(I+T)
import bisect
times=[e[0] for e in allev]
slow=sorted(d,reverse=True)[:int(sys.argv[6]) if len(sys.argv)>6 else 3]
for dur,k in slow:
    a=starts[k]; b=starts[k+1]
    print("=== iter",k,"dur %.1f us, submit phase %.1f"%(dur/1e3,sp[k]/1e3))
    i0=bisect.bisect_left(times,a); i1=bisect.bisect_left(times,b)
    # compress: print events but collapse runs of same (side,what,tid)
    last=None;cnt=0;first=None
    out=[]
    for e in allev[i0:i1+1]:
        key=(e[1],e[2],e[3])
        if key==last: cnt+=1; lastt=e[0]; continue
        if last: out.append((first,last,cnt,lastt))
        last=key;cnt=1;first=e[0];lastt=e[0]
    out.append((first,last,cnt,lastt))
    prev=a
    lines=[]
    for f,key,c,lt in out:
        gap=(f-prev)/1e3
        lines.append((gap,"%9.1f %+8.1f %s %-11s t%-3d x%d%s"%((f-a)/1e3,gap,key[0],names.get(key[1],key[1]),key[2]%1000,c,"" if c==1 else " (to %.1f)"%((lt-a)/1e3))))
        prev=lt
    show=set()
    for i,(g,s) in enumerate(lines):
        if g>15: show.update(range(max(0,i-4),min(len(lines),i+3)))
    lastshown=-1
    for i in sorted(show):
        if i!=lastshown+1: print("   ...")
        print(lines[i][1]); lastshown=i
