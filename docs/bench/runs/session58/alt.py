import subprocess, sys, statistics, re
# alt.py ROUNDS TYPE ROWS COLS TOK REPS: prodp_old / prodp_default alternately; B (pairs) best GMAC/s
R=int(sys.argv[1]); args=sys.argv[2:]
res={'old':[], 'default':[]}
for r in range(R):
    for b in (['old','default'] if r%2==0 else ['default','old']):
        out=subprocess.run(['./prodp_'+b]+args,capture_output=True,text=True).stdout
        m=re.search(r'B ([0-9.]+) GMAC/s',out); res[b].append(float(m.group(1)))
rat=[n/o for o,n in zip(res['old'],res['default'])]
print(f"{' '.join(args)}: old med {statistics.median(res['old']):.1f} max {max(res['old']):.1f}  new med {statistics.median(res['default']):.1f} max {max(res['default']):.1f}  rate new/old median {statistics.median(rat):.3f} [{min(rat):.2f}-{max(rat):.2f}]")
