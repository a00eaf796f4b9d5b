#!/usr/bin/python3
"""PyTorch CPU rates the step-time model is built from, on this machine: per-op dispatch (plain, with autograd, a
100-op chain forward + backward), linear GEMMs by shape, attention bmm and softmax, elementwise multiply by size
(fresh output vs in place: the page-fault cost of fresh large tensors), cross-entropy over a 32000 vocabulary.

    OMP_NUM_THREADS=T chrt -f 10 /usr/bin/python3 tools/groundtruth/cpu_op_rates.py T
"""
import time, statistics, torch, sys, json
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
def tc(fn, min_s=0.2, rep=5):
    fn(); n=0; t0=time.perf_counter()
    while time.perf_counter()-t0 < min_s/3: fn(); n+=1
    pb=max(1,n*3//rep*1); out=[]
    for _ in range(rep):
        t0=time.perf_counter()
        for _ in range(pb): fn()
        out.append((time.perf_counter()-t0)/pb)
    return statistics.median(out)
res = {}
# dispatch
x = torch.ones(1); xg = torch.ones(1, requires_grad=True)
res["dispatch_add_us"] = tc(lambda: x + x)*1e6
res["dispatch_autograd_mul_us"] = tc(lambda: xg * 1.5)*1e6
def chain():
    y = xg
    for _ in range(100): y = y * 1.0001
    y.backward()
res["chain100_fwd_bwd_us_per_op"] = tc(chain)*1e6/100
# gemm shapes m,n,k  (linear: x[m,k] W[n,k]^T)
for m,n,k in [(512,512,512),(512,1536,512),(512,256,512),(1536,512,512),(512,512,1536),(256,384,384),(1024,1024,384),(1024,384,1024),(384,1024,1024),(512,32000,512),(512,512,32000),(1024,32000,384),(2048,2048,2048),(512,8,512),(512,512,8),(8,512,512),(512,768,768),(512,2048,768)]:
    a=torch.randn(m,k); w=torch.randn(n,k)
    t=tc(lambda: torch.nn.functional.linear(a,w))
    res[f"linear {m}x{n}x{k}"]=(t*1e3, 2*m*n*k/t/1e9)
# bmm attention: batch b*heads, s x s x hd
for B,s,hd in [(16,256,64),(24,256,64),(8,512,64),(32,128,64)]:
    q=torch.randn(B,s,hd); kk=torch.randn(B,s,hd); p=torch.randn(B,s,s)
    t=tc(lambda: q@kk.transpose(-2,-1)); res[f"bmm qk {B}x{s}x{hd}"]=(t*1e3, 2*B*s*s*hd/t/1e9)
    t=tc(lambda: p@kk); res[f"bmm pv {B}x{s}x{hd}"]=(t*1e3, 2*B*s*s*hd/t/1e9)
    t=tc(lambda: torch.softmax(p,-1)); res[f"softmax {B}x{s}x{s}"]=(t*1e3, 8*B*s*s/t/1e9)
# elementwise at activation sizes
for n in [65536, 262144, 786432, 4194304, 16777216]:
    a=torch.randn(n); b=torch.randn(n)
    t=tc(lambda: a*b); res[f"mul {n}"]=(t*1e6, 12*n/t/1e9)
    t=tc(lambda: a.mul_(1.0)); res[f"mul_ inplace {n}"]=(t*1e6, 8*n/t/1e9)
# cross entropy
for T,V in [(255*2,32000),(1020,32000)]:
    lg=torch.randn(T,V,requires_grad=True); tg=torch.randint(0,V,(T,))
    def ce():
        l=torch.nn.functional.cross_entropy(lg,tg); l.backward()
    t=tc(ce,rep=3); res[f"ce fwd+bwd {T}x{V}"]=(t*1e3, T*V*4/t/1e9)
for kk_,v in res.items(): print(kk_, v)
