#!/usr/bin/python3
"""Linear layers (forward + dgrad + wgrad) at training shapes against a square 2048 sgemm, through the same BLAS
(torch on CPU). Prints each shape's GFLOP/s and its fraction of the square rate; the CPU timing model uses the
probed square sgemm rate as the linears' rate when this fraction is near 1 (validation/measured/cpu-vm/microbench.md).

    OMP_NUM_THREADS=T OPENBLAS_NUM_THREADS=T chrt -f 10 /usr/bin/python3 tools/groundtruth/cpu_gemm_fraction.py T
"""
import time, statistics, torch, sys
torch.set_num_threads(int(sys.argv[1]))
def tc(fn, rep=5):
    fn(); fn()
    n=0; t0=time.perf_counter()
    while time.perf_counter()-t0 < 0.1: fn(); n+=1
    out=[]
    for _ in range(rep):
        t0=time.perf_counter()
        for _ in range(max(1,n)): fn()
        out.append((time.perf_counter()-t0)/max(1,n))
    return statistics.median(out)
a=torch.randn(2048,2048); b=torch.randn(2048,2048)
sq = 2*2048**3/tc(lambda: a@b)/1e9
print(f"square 2048 mm: {sq:.1f} GFLOP/s")
rows=[]
shapes=[(256,384,384),(256,384,1024),(256,1024,384),(1024,384,1024),(512,512,512),(512,512,256),(512,512,1536),(512,1536,512),
        (512,768,768),(512,768,2048),(512,2048,768),(256,32000,384),(512,32000,512),(512,32000,768)]
for m,k,n in shapes:   # x[m,k] @ W[n,k]^T
    x=torch.randn(m,k,requires_grad=True); W=torch.randn(n,k,requires_grad=True); g=torch.randn(m,n)
    def f():
        x.grad=None; W.grad=None
        torch.nn.functional.linear(x,W).backward(g)
    t=tc(f); r=3*2*m*n*k/t/1e9; rows.append(r/sq)
    print(f"linear fwd+bwd m={m} k={k} n={n}: {r:.1f} GFLOP/s = {r/sq:.3f} of square")
print(f"median fraction {statistics.median(rows):.3f} min {min(rows):.3f} max {max(rows):.3f}")
