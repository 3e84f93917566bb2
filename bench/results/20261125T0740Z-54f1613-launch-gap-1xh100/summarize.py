# Summary of call1/c.tsv (launch_gap): per (experiment, variant, part) the median of the rounds' p50s, their range,
# and the median of the rounds' p90s, in us. Usage: python3 summarize.py call1/c.tsv
import statistics, sys
rows = {}
for line in open(sys.argv[1] if len(sys.argv) > 1 else 'call1/c.tsv'):
    if line.startswith('#'): continue
    f = line.rstrip('\n').split('\t')
    rows.setdefault((f[1], f[2], f[3]), []).append((float(f[5]), float(f[6])))
print('| experiment | variant | part | p50 (median of rounds) | p50 range | p90 (median) |')
print('|---|---|---|---|---|---|')
for (e, v, p), xs in rows.items():
    p50 = [x[0] for x in xs]; p90 = [x[1] for x in xs]
    print(f'| {e} | {v} | {p} | {statistics.median(p50):.2f} | {min(p50):.2f}-{max(p50):.2f} | {statistics.median(p90):.2f} |')
