#!/usr/bin/env python3
import subprocess, sys, re, statistics
# dab.py ROUNDS DEPTH A B MODEL: prefill tok/s at DEPTH (k8, 128 tokens), 1 and 2 threads, builds alternating
R=int(sys.argv[1]); D=sys.argv[2]; A=sys.argv[3]; B=sys.argv[4]; m=sys.argv[5]
for thr in ('1','2'):
    v={A:[],B:[]}
    for r in range(R):
        for b in ((A,B) if r%2==0 else (B,A)):
            out=subprocess.run([f'{b}/bin/cpu_bench','-m',m,'--cache','k8','--threads',thr,'--depth',D,'-p','128','-n','1'],capture_output=True,text=True).stdout
            v[b].append(float(re.search(r'prefill \d+ tokens: ([0-9.]+) tok/s',out).group(1)))
    rat=[a/b for a,b in zip(v[A],v[B])]
    print(f'{m.split("/")[-1]} depth {D} thr {thr}: A {statistics.median(v[A]):.1f} B {statistics.median(v[B]):.1f} tok/s, time B/A median {statistics.median(rat):.3f} [{min(rat):.2f}-{max(rat):.2f}]', flush=True)
