# Summarizes call1/*.tsv (run it inside call1/): per implementation, mode and part, the median of the per-round p50s
# with their range, and the median p90; CUDA_DEVICE_MAX_CONNECTIONS=32 (the engine's) and =8 (the last pass) apart.
import sys,collections,statistics
rows=collections.defaultdict(list)
for fn,tag in [('c.tsv',''),('java.tsv',''),('java-old.tsv','-old')]:
    sect='32'
    for l in open(fn):
        if l.startswith('# CUDA_DEVICE_MAX_CONNECTIONS=8'): sect='8'
        f=l.rstrip('\n').split('\t')
        if len(f)!=9 or f[0]=='impl': continue
        impl,rnd,mode,part,n,p50,p90,p99,mean=f
        rows[(sect,impl+tag,mode,part)].append((int(rnd),float(p50),float(p90),float(p99),float(mean)))
parts=[('launch','launch'),('record','launch'),('record','record'),('record','launch+record'),('poll1','launch'),('poll1','record'),('poll1','query'),('idle','launch'),('idle','record'),('idle','first-query'),('idle','queries(count)'),('idle','launch-to-complete')]
for sect in ['32','8']:
    impls=sorted({k[1] for k in rows if k[0]==sect}, key=lambda s:['c','java','java-old','java-raw','java-critical'].index(s))
    print(f'\nCUDA_DEVICE_MAX_CONNECTIONS={sect}: p50 (min-max of the per-round p50s), p90 median; rounds: all')
    print('| mode | part | '+' | '.join(impls)+' |')
    print('|---|---|'+'---|'*len(impls))
    for m,p in parts:
        cells=[]
        for i in impls:
            v=rows.get((sect,i,m,p))
            if not v: cells.append('-'); continue
            p50s=[x[1] for x in v]; p90s=[x[2] for x in v]
            cells.append(f'{statistics.median(p50s):.2f} ({min(p50s):.2f}-{max(p50s):.2f}) / p90 {statistics.median(p90s):.2f}')
        print(f'| {m} | {p} | '+' | '.join(cells)+' |')
