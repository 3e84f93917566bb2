"""Prints one markdown row per kv-bench JVM log and mode: p50/p99 us and % of contiguous, and for traced rows the
worker's issue parts per launch, its poll/report/issue time and the caller's calls. Usage: python3 summarize.py LOG..."""
import re, sys, os
row = re.compile(r"^llama3-70b\s+4096 tok\s+(push|pull).*?p50\s+(\d+) us\s+p99\s+(\d+) us.*?contiguous\s+([\d.]+) GB/s \(\s*(\d+)%\)")
tr = re.compile(r"xgmi trace (push|pull)-4096")
for path in sys.argv[1:]:
    name = os.path.relpath(path).replace(".log", "")
    traces = {}
    for line in open(path, errors="replace"):
        m = tr.search(line)
        if m:
            parts = re.search(r"issue per launch .*?; (\d+) launches timed\): (.*?) \| sum ([\d.NaN]+)", line)
            worker = re.search(r"worker's time \(p50, us\): (\d+) polls of its events ([\d.]+), reporting completions ([\d.]+), issuing ([\d.]+)", line)
            caller = re.search(r"caller's calls \(p50 per migration, us; (\d+) calls\): plans ([\d.]+) \| engine calls ([\d.]+) \| after the calls ([\d.]+)", line)
            last = re.search(r"last launch ([\d.]+) \| call returned ([\d.]+)", line)
            traces[m.group(1)] = (parts, worker, caller, last)
            continue
        m = row.search(line)
        if not m:
            continue
        mode, p50, p99, contig, pct = m.groups()
        out = f"| {name} | {mode} | {p50} / {p99} | {pct}% |"
        t = traces.get(mode)
        if t:
            parts, worker, caller, last = t
            if parts:
                vals = [p.rsplit(" ", 1)[1] for p in parts.group(2).split(" | ")]
                out += f" {parts.group(1)}: " + " / ".join(vals) + f" = {parts.group(3)} |"
            if worker:
                out += f" {worker.group(2)} ({worker.group(1)}) / {worker.group(3)} / {worker.group(4)} |"
            if caller:
                out += f" {caller.group(2)} / {caller.group(3)} / {caller.group(4)} ({caller.group(1)} calls) |"
            if last:
                out += f" {last.group(2)} / {last.group(1)} |"
        print(out)
