import sys, collections
names={1:'SEND',2:'DRIVE_START',3:'DRIVE_DONE',4:'DRIVE_BACK',5:'HAND_OFF',6:'TIMER_BACK',7:'COMPLETE',8:'LOOP_SUBMIT',9:'H_INIT',10:'H_TARGET',11:'H_END',12:'SEL_WAKE',13:'SEL_SLEEP',14:'TB_WAKE',15:'DEFER',16:'H_SKIP'}
ev=[]
for f in sys.argv[1:]:
    tag=f.split('.')[-2]
    for line in open(f):
        t,w,th,a=map(int,line.split()); ev.append((t,tag,w,th,a))
ev.sort()
init=sys.argv[1].split('.')[-2]
ops={}
cnt=collections.Counter(e[2] for e in ev)
print({names[k]:v for k,v in cnt.items()})
for t,tag,w,th,a in ev:
    if tag!=init: continue
    if w in (1,8): ops.setdefault(a,{})['s']=t; ops[a]['path']=w
    elif w==7 and a in ops: ops[a]['c']=t
    elif w in (3,4,5) and a in ops: ops[a]['d']=w
lat=sorted(((o['c']-o['s'],u,o) for u,o in ops.items() if 'c' in o and 's' in o), key=lambda x:x[0])
print('ops',len(lat),'p50',lat[len(lat)//2][0]/1e3,'p99',lat[int(len(lat)*.99)][0]/1e3)
slow=[x for x in lat if x[0]>500_000]
print('slow >500us',len(slow), collections.Counter((x[2].get('path'),x[2].get('d')) for x in slow))
print('all', collections.Counter((x[2].get('path'),x[2].get('d')) for x in lat))
import bisect
ts=[e[0] for e in ev]
for l,u,o in slow[-int(sys.argv[0:1] and 4):]:
    print('---- uid',u,'lat us',l/1e3)
    i=bisect.bisect_left(ts,o['s']-50_000); j=bisect.bisect_right(ts,o['c']+100_000)
    for e in ev[i:j][:60]:
        print('%10.1f %s %-12s th%d %d'%((e[0]-o['s'])/1e3,'I' if e[1]==init else 'T',names[e[2]],e[3],e[4]))
