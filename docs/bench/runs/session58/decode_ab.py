#!/usr/bin/env python3
import subprocess, sys, re, statistics
# decab.py ROUNDS DEPTH THREADS A B MODEL: decode paired % of floor (k8), builds alternating
R=int(sys.argv[1]); D=sys.argv[2]; T=sys.argv[3]; A=sys.argv[4]; B=sys.argv[5]; m=sys.argv[6]
v={A:[],B:[]}
for r in range(R):
    for b in ((A,B) if r%2==0 else (B,A)):
        out=subprocess.run([f'{b}/bin/cpu_bench','-m',m,'--cache','k8','--threads',T,'--depth',D,'-p','0','-n','32'],capture_output=True,text=True).stdout
        v[b].append(float(re.search(r'median (\d+)% of its floor',out).group(1)))
print(f'{m.split("/")[-1]} depth {D} thr {T}: paired % of floor A {v[A]} B {v[B]}; medians {statistics.median(v[A])} / {statistics.median(v[B])}', flush=True)
