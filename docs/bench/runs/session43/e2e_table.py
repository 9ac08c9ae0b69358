# The end-to-end table (median prefill tok/s, steady decode tok/s from the replayed graph, the
# memory report) from forward_gpu_device bench logs; the parser of session 37's run4.sh.
import sys, re, statistics, collections
rows = collections.defaultdict(list)
key = None
for l in open(sys.argv[1]):
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+) layers \S+: prefill ([\d.]+) tok/s.*decode ([\d.]+) tok/s.*weights ([\d.]+) MiB, kv ([\d.]+) MiB, scratch ([\d.]+) MiB', l)
    if m:
        key = m.group(1, 2, 3); rows[key].append([float(m.group(4)), float(m.group(5)), None, m.group(6), m.group(7), m.group(8)]); continue
    m = re.search(r'as a graph replayed back to back \(the device alone\); steady: ([\d.]+) us', l)
    if m and key and rows[key] and rows[key][-1][2] is None: rows[key][-1][2] = float(m.group(1))
print("| model | ctx | cache | prefill tok/s | decode tok/s (steady) | MiB weights / KV / scratch |")
print("|---|---:|---|---:|---:|---|")
for (model, ctx, mode), v in rows.items():
    pre = statistics.median(x[0] for x in v)
    st = statistics.median(1e6 / x[2] for x in v if x[2])
    print(f"| {model} | {ctx} | {mode} | {pre:.0f} | {st:.0f} | {v[0][3]} / {v[0][4]} / {v[0][5]} |  ({len(v)} runs)")
