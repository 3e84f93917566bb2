# usage: stages.py INIT.trace TARGET.trace [N] : per caller-driven round trip, the time between trace stamps, over
# the last N (default 10000) submitted ops before the bench's 6 integrity read-backs, i.e. its measured iterations
import sys, bisect
def load(f):
    ev=[]
    for line in open(f):
        t,w,th,a=map(int,line.split()); ev.append((t,w,th,a))
    ev.sort(); return ev
I=load(sys.argv[1]); T=load(sys.argv[2])
ops={}; order=[]
for t,w,th,a in I:
    if w==17:
        ops[a]={'sub':t}; order.append(a)
    elif a in ops:
        k={18:'wb',1:'send',2:'ds',7:'comp',3:'dd',4:'back',19:'dx',8:'loopsub'}.get(w)
        if k and k not in ops[a]: ops[a][k]=t
tt=[e[0] for e in T]
def pct(xs):
    xs=sorted(xs); n=len(xs)
    if n==0: return 'n=0'
    f=lambda q: xs[min(n-1,int(n*q))]/1e3
    return 'n=%d p50 %.1f p90 %.1f p99 %.1f us' % (n,f(.5),f(.9),f(.99))
st={k:[] for k in ['gap prev exit->submit','submit->write begin','write syscall','send->drive start','drive start->complete','complete->drive exit','submit->drive exit (op)','cycle submit->submit','target handle->ack write','write begin->target handle','target handle before send (fraction)','sel wake->handle']}
before=0;cnt=0
prev=None
# only ops that took the full caller-driven path with a drive that completed
N=int(sys.argv[3]) if len(sys.argv)>3 else 10000
for u in order[-N-6:-6]:   # the measured iterations (warm-up and integrity read-backs left out)
    o=ops[u]
    if not all(k in o for k in ('wb','send','ds','comp','dx')): prev=None; continue
    if prev is not None:
        st['gap prev exit->submit'].append(o['sub']-prev['dx'])
        st['cycle submit->submit'].append(o['sub']-prev['sub'])
    st['submit->write begin'].append(o['wb']-o['sub'])
    st['write syscall'].append(o['send']-o['wb'])
    st['send->drive start'].append(o['ds']-o['send'])
    st['drive start->complete'].append(o['comp']-o['ds'])
    st['complete->drive exit'].append(o['dx']-o['comp'])
    st['submit->drive exit (op)'].append(o['dx']-o['sub'])
    i=bisect.bisect_left(tt,o['wb'])
    h=a=None
    while i<len(T) and T[i][0]<o['comp']:
        if T[i][1]==10 and h is None: h=T[i][0]; hi=i
        if T[i][1]==20 and h is not None and a is None: a=T[i][0]
        i+=1
    if h is not None:
        st['write begin->target handle'].append(h-o['wb'])
        cnt+=1; before+= h<o['send']
        j=hi
        while j>0 and T[j][1]!=12 and T[j][1]!=13: j-=1
        if T[j][1]==12: st['sel wake->handle'].append(h-T[j][0])
    if a is not None: st['target handle->ack write'].append(a-h)
    prev=o
for k,v in st.items():
    if v: print('%-32s %s'%(k,pct(v)))
print('target handled the request before the caller write returned: %d of %d'%(before,cnt))
print('ops',len(order),'fully driven',len(st['write syscall']))
