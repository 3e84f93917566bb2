import sys, collections, bisect
names={1:'SEND',2:'DRIVE_START',3:'DRIVE_DONE',4:'DRIVE_BACK',5:'HAND_OFF',6:'TIMER_BACK',7:'COMPLETE',8:'LOOP_SUBMIT',9:'H_INIT',10:'H_TARGET',11:'H_END',12:'SEL_WAKE',13:'SEL_SLEEP',14:'TB_WAKE',15:'DEFER',16:'H_SKIP',17:'SUBMIT',18:'WRITE_BEGIN',19:'DRIVE_EXIT',20:'ACK_WRITE'}
def load(f,side):
    return [(int(t),side,int(w),int(tid),int(a)) for t,w,tid,a in (l.split() for l in open(f))]
I=load(sys.argv[1],'I'); T=load(sys.argv[2],'T')
B=int(sys.argv[3]); N=int(sys.argv[4]); trail=int(sys.argv[5]); q=float(sys.argv[6])
I.sort(); T.sort()
subs=[e for e in I if e[2]==17]
ctid=collections.Counter(e[3] for e in subs).most_common(1)[0][0]
subs=[e for e in subs if e[3]==ctid][:-trail or None][-N*B:]
starts=[subs[k*B][0] for k in range(N)]
d=sorted((starts[k+1]-starts[k],k) for k in range(N-1))
dur,k=d[int(q*len(d))]
allev=sorted(I+T); times=[e[0] for e in allev]
a,b=starts[k],starts[k+1]
print("iter",k,"dur %.1f"%(dur/1e3))
i0=bisect.bisect_left(times,a); i1=bisect.bisect_left(times,b)
out=[];last=None
for e in allev[i0:i1+1]:
    key=(e[1],e[2],e[3])
    if e[2] in (17,8): key=(e[1],'SUBMITS',e[3])
    if key==last: out[-1][2]+=1; out[-1][3]=e[0]; continue
    out.append([e[0],key,1,e[0]]); last=key
prev=a
for f,key,c,lt in out:
    print("%8.1f %+7.1f %s %-11s t%-3d x%d%s"%((f-a)/1e3,(f-prev)/1e3,key[0],names.get(key[1],key[1]),key[2]%1000,c,"" if c==1 else " (to %.1f)"%((lt-a)/1e3)))
    prev=lt
