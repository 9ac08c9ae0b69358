#!/usr/bin/env python3
# prompt_ab.py ROUNDS P BUILD_A BUILD_B MODEL... : prefill tok/s of 128-token prompts (depth 0, k8), 1 and 2 threads,
# the two builds' cpu_bench alternating (order swapped each round); median of the rounds' time ratios B/A.
import subprocess, sys, re, statistics
R=int(sys.argv[1]); P=sys.argv[2]; A=sys.argv[3]; B=sys.argv[4]; models=sys.argv[5:]
for m in models:
    for thr in ('1','2'):
        v={A:[],B:[]}
        for r in range(R):
            for b in ((A,B) if r%2==0 else (B,A)):
                out=subprocess.run([f'{b}/bin/cpu_bench','-m',m,'--cache','k8','--threads',thr,'--depth','0','-p',P,'-n','1'],capture_output=True,text=True).stdout
                mm=re.search(r'prefill \d+ tokens: ([0-9.]+) tok/s',out)
                v[b].append(float(mm.group(1)))
        rat=[a/b for a,b in zip(v[A],v[B])]  # time B / time A = tok/s A / tok/s B
        print(f'{m.split("/")[-1]:32s} thr {thr}: A {statistics.median(v[A]):7.1f} tok/s, B {statistics.median(v[B]):7.1f} tok/s, time B/A median {statistics.median(rat):.3f} [{min(rat):.2f}-{max(rat):.2f}]', flush=True)
