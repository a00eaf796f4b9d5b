#!/usr/bin/python3
"""One-thread AdamW on the CPU against one-thread streaming: does the bytes-per-parameter count of
scheduler.cpp (cpu_adamw_bytes_per_param) explain the optimizer step's time on one core?

Measures, with torch.set_num_threads(1) (what torchrun's OMP_NUM_THREADS=1 gives each rank):
  - copy:  dst.copy_(src) over large bf16 tensors (2 B read + 2 B written per element, the write to lines
           already resident after the first pass: no fresh pages);
  - scale: t.mul_(s) in place (2 B read + 2 B written);
  - adamw: torch.optim.AdamW(foreach=False) step on bf16 parameters and gradients (states bf16 like the
           parameters: zeros_like), timed after the first step (which creates the states).
and prints the bytes per parameter the AdamW time implies at the in-place streaming rate.

    OMP_NUM_THREADS=1 /usr/bin/python3 tools/groundtruth/cpu_adamw_single_thread.py [millions_of_params]
"""
import json, statistics, sys, time
import torch

torch.set_num_threads(1)
n = int(float(sys.argv[1]) * 1e6) if len(sys.argv) > 1 else 64_000_000
chunks = 4   # a few large parameters, as FSDP's flat shards or a model's big matrices


def med(fn, reps=5):
    fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


src = torch.randn(n).to(torch.bfloat16)
dst = torch.empty_like(src)
res = {"params": n, "torch": torch.__version__, "threads": torch.get_num_threads()}
res["copy_GBps"] = 4 * n / med(lambda: dst.copy_(src)) / 1e9
res["scale_inplace_GBps"] = 4 * n / med(lambda: dst.mul_(0.999)) / 1e9
del src, dst

params = [torch.nn.Parameter(torch.randn(n // chunks).to(torch.bfloat16)) for _ in range(chunks)]
for p in params:
    p.grad = torch.randn_like(p)
opt = torch.optim.AdamW(params, lr=1e-5, foreach=False)
opt.step()   # creates exp_avg, exp_avg_sq (zeros_like: bf16)
t = med(opt.step, reps=3)
res["adamw_for_loop_s"] = t
res["adamw_ns_per_param"] = t / n * 1e9
res["adamw_implied_bytes_per_param_at_inplace_rate"] = t / n * res["scale_inplace_GBps"] * 1e9
print(json.dumps(res, indent=1))
