import json,sys,glob,os
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d+'/*.json'), key=os.path.getmtime):
        if f.endswith('baselines.json'): continue
        try: rows=json.load(open(f))
        except Exception as e: print(f,e); continue
        for r in rows:
            if 'p50LatUs' in r: print("%-22s %6s x%-4s p50 %8.1f p99 %8.1f avg %8.1f avgBW %.2f"%(os.path.basename(f)[:-5],r['msgSize'],r['batchSize'],r['p50LatUs'],r['p99LatUs'],r['avgLatUs'],r['avgBwGBps']))
