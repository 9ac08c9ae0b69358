#!/bin/bash
# The forward-pass table of docs/bench/cpu.md: cpu_bench (--json) for each model, depth, cache mode
# and thread count, then one markdown table per model. "paired % of floor": each decode token timed
# between two read probes with the decode's thread count, its floor at the better of them; median
# over the tokens no thread of which the OS preempted ("88 (3)": 3 tokens preempted, left out). A
# measurement script, not a test; run it on a quiet machine (nothing else building).
#
#   tests/bench/cpu_table.sh BUILD_DIR OUT.md MODEL.gguf...
#
# Environment: DEPTHS (default "0 1024 4096"), CACHES ("f16 k8 k8v8"), THREADS ("1 2"),
# PROMPT (-p, default 64), GEN (-n, default 16). Raw JSON lines go to OUT.md.jsonl.
set -eu -o pipefail
build=$1 out=$2
shift 2
bench=$build/bin/cpu_bench
[ -x "$bench" ] || { echo "no $bench (build the cpu_bench target)" >&2; exit 1; }
raw=$out.jsonl
: > "$raw"
for model in "$@"; do
  for depth in ${DEPTHS:-0 1024 4096}; do
    for cache in ${CACHES:-f16 k8 k8v8}; do
      for t in ${THREADS:-1 2}; do
        "$bench" -m "$model" --cache "$cache" --threads "$t" --depth "$depth" -p "${PROMPT:-64}" -n "${GEN:-16}" --json \
          | grep '^{' >> "$raw"
      done
    done
  done
done
# The machine, as the table's first line: the development VM's CPU has changed between sessions.
machine=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
l2=$(lscpu 2>/dev/null | sed -n 's/^L2 cache: *//p' | head -1)
amx=$(grep -qw amx_bf16 /proc/cpuinfo 2>/dev/null && echo ", AMX-BF16" || true)
python3 - "$raw" "${machine:-unknown CPU} (L2 ${l2:-?}$amx), $(nproc) CPUs, $(date -u +%F)" > "$out" <<'EOF'
import json, sys, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"Machine: {sys.argv[2]}\n")
def pre(r):  # tokens the OS preempted (left out of the paired median unless more than half were)
    n = r.get('paired_preempted', 0)
    return f" ({n})" if n else ""
models = []
for r in rows:
    if r["model"] not in models: models.append(r["model"])
for m in models:
    print(f"**{os.path.basename(m)}** (kernels {next(r['kernels'] for r in rows if r['model'] == m)})\n")
    print("| depth | cache | thr | prefill tok/s | GMAC/s | % peak256 / peak512 | decode tok/s | ms/token (best) "
          "| floor ms | % of floor | BW GB/s all / T | paired % of floor | paired GB/s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["model"] != m: continue
        p256 = 100 * r["prefill_gmacs"] / max(r["dot_peak_gmacs"], 1e-9)
        p512 = 100 * r["prefill_gmacs"] / max(r["dot_peak512_gmacs"], 1e-9)
        peaks = f"{p256:.0f} / {p512:.0f}"
        if r.get("amx_peak_gmacs", 0) > 0:  # the products on AMX tiles: that unit's peak too
            peaks += f" (AMX {100 * r['prefill_gmacs'] / r['amx_peak_gmacs']:.0f})"
        if r.get("plain_share", 0) > 0.5:  # f32/f16/bf16 weights: their ceiling is the FMA peak
            peaks += f" (FMA {100 * r['prefill_gmacs'] / max(r['fma_peak_gmacs'], 1e-9):.0f})"
        pct = 100 * r["floor_ms_per_token"] / max(r["decode_ms_per_token"], 1e-9)
        print(f"| {r['depth']} | {r['cache']} | {r['threads']} | {r['prefill_tps']:.1f} | {r['prefill_gmacs']:.1f} "
              f"| {peaks} | {r['decode_tps']:.1f} | {r['decode_ms_per_token']:.2f} ({r['decode_best_ms']:.2f}) "
              f"| {r['floor_ms_per_token']:.2f} | {pct:.0f} | {r['bandwidth_gbps']:.1f} / {r['bandwidth_gbps_threads']:.1f} "
              f"| {r.get('paired_floor_pct', 0):.0f}{pre(r)} | {r.get('paired_gbps', 0):.1f} |")
    print()
EOF
echo "wrote $out ($(wc -l < "$raw") runs)"
