#!/usr/bin/python3
"""CPU ground truth for ftbound: training steps of Llama-architecture models from ~20M to ~0.9B parameters on
this machine's CPU (Debian's python3-torch; no downloads), over a grid of model size, sequence length,
micro-batch, thread count (1-2), precision (fp32, bf16 autocast, pure bf16) and method (full, LoRA), plus
microbenchmarks of the pieces the CPU timing model is built from (GEMM by shape, dtype and threads;
elementwise kernels by size; the per-op dispatch cost).

Writes validation/measured/cpu-<host>/ (or --out):
  jobs/*.yaml       one CONTRACT.md job file per case; `hardware.system` names ../system.yaml (the file
                    `ftbound probe --out` writes for this machine) or ../system-1thread.yaml (the same machine
                    restricted to one core, for the 1-thread cases)
  cases.csv         step_seconds (median of the timed steps; no row when the process never got its
                    cores), device_used (peak RSS of the process) and
                    allocated_peak (peak of the bytes malloc had handed out, above the pre-model baseline)
  microbench.csv    the microbenchmark rows
  raw.json          every sample: step times with the 1-minute load average at each step, RSS at each stage,
                    malloc statistics, versions

    nice -n -10 /usr/bin/python3 tools/groundtruth/cpu_collect.py [--out DIR] [--only TEXT] [--resume]
                                                                  [--micro-only | --no-micro]

Each case runs in its own process so that its peak RSS is its own; the thread count is set through
OMP_NUM_THREADS / OPENBLAS_NUM_THREADS before torch is imported and torch.set_num_threads. Run it at a higher
priority than the other work on the machine (nice -n -10) and read the recorded load average: the machine may
be shared.
"""
import argparse
import csv
import ctypes
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Llama-architecture configurations (config.json fields), vocabulary 32000 as Llama 2. Named by their
# parameter count (counted by count_params; `ftbound model` gives the same).
_COMMON = dict(model_type="llama", vocab_size=32000, rms_norm_eps=1e-5, rope_theta=10000.0,
               max_position_embeddings=2048)
MODELS = {
    "llama-23m": dict(_COMMON, hidden_size=384, intermediate_size=1024, num_hidden_layers=6,
                      num_attention_heads=6, num_key_value_heads=6, tie_word_embeddings=True),
    "llama-58m": dict(_COMMON, hidden_size=512, intermediate_size=1536, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=4, tie_word_embeddings=False),
    "llama-134m": dict(_COMMON, hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                       num_attention_heads=12, num_key_value_heads=12, tie_word_embeddings=False),
    "llama-374m": dict(_COMMON, hidden_size=1024, intermediate_size=2816, num_hidden_layers=24,
                       num_attention_heads=16, num_key_value_heads=8, tie_word_embeddings=False),
    "llama-0.9b": dict(_COMMON, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
                       num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False),
}
LORA_QKVO = dict(rank=8, alpha=16, targets=["q_proj", "k_proj", "v_proj", "o_proj"])
LORA_ALL = dict(rank=16, alpha=32, targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
LORAS = {"lora": LORA_QKVO, "lora-all": LORA_ALL}

# (model, method, precision, micro_batch, seq_len, threads). method: full | lora (q,k,v,o r8) | lora-all
# (all linear layers r16); precision: fp32 | bf16 (torch.autocast on fp32 weights) | bf16-pure (parameters,
# gradients and AdamW state in bf16). The ~0.9B model runs at small shapes only (minutes per case).
GRID = [
    # the first five cases of 2026-11-30, kept for continuity (2 threads, fp32, sequence 256)
    ("llama-23m", "full", "fp32", 1, 256, 2),
    ("llama-23m", "full", "fp32", 4, 256, 2),
    ("llama-23m", "lora", "fp32", 4, 256, 2),
    ("llama-58m", "full", "fp32", 2, 256, 2),
    ("llama-58m", "lora", "fp32", 2, 256, 2),
    # shape sweep on one model
    ("llama-58m", "full", "fp32", 1, 128, 2),
    ("llama-58m", "full", "fp32", 1, 512, 2),
    ("llama-58m", "full", "fp32", 8, 128, 2),
    ("llama-58m", "full", "fp32", 4, 512, 2),
    ("llama-58m", "lora", "fp32", 1, 128, 2),
    ("llama-58m", "lora", "fp32", 8, 128, 2),
    ("llama-58m", "lora-all", "fp32", 4, 512, 2),
    ("llama-23m", "full", "fp32", 1, 1024, 2),
    # model size sweep
    ("llama-134m", "full", "fp32", 2, 256, 2),
    ("llama-134m", "lora", "fp32", 2, 256, 2),
    ("llama-134m", "lora-all", "fp32", 1, 1024, 2),
    ("llama-374m", "full", "fp32", 1, 256, 2),
    ("llama-374m", "lora-all", "fp32", 2, 256, 2),
    ("llama-0.9b", "lora-all", "fp32", 1, 128, 2),
    ("llama-0.9b", "full", "fp32", 1, 128, 2),
    # one thread
    ("llama-23m", "full", "fp32", 2, 256, 1),
    ("llama-23m", "lora", "fp32", 2, 256, 1),
    ("llama-58m", "full", "fp32", 4, 256, 1),
    ("llama-134m", "full", "fp32", 2, 256, 1),
    ("llama-134m", "lora-all", "fp32", 2, 256, 1),
    ("llama-374m", "lora-all", "bf16", 1, 256, 1),
    # bf16: autocast on fp32 weights, and pure bf16
    ("llama-58m", "full", "bf16", 2, 256, 2),
    ("llama-58m", "lora", "bf16", 2, 256, 2),
    ("llama-58m", "full", "bf16-pure", 2, 256, 2),
    ("llama-134m", "full", "bf16", 2, 256, 2),
    ("llama-134m", "lora-all", "bf16", 2, 256, 2),
    ("llama-134m", "full", "bf16-pure", 4, 256, 2),
    ("llama-374m", "lora-all", "bf16", 2, 256, 2),
    ("llama-374m", "full", "bf16-pure", 1, 256, 2),
    ("llama-0.9b", "lora-all", "bf16", 1, 128, 2),
    ("llama-0.9b", "full", "bf16-pure", 1, 128, 2),
]


def case_id(model, method, precision, mb, seq, threads):
    size = model.split("-", 1)[1]
    return f"cpu-{size}-{method}-{precision}-b{mb}-s{seq}-t{threads}"


# ---- malloc statistics (glibc mallinfo2): bytes handed out, and bytes taken from the kernel ----------------
class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _mallinfo():
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    m = libc.mallinfo2()
    # in use: arena chunks in use + mmapped chunks; obtained: arena size + mmapped chunks
    return m.uordblks + m.hblkhd, m.arena + m.hblkhd


def _proc_status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _rss():
    return dict(rss_bytes=_proc_status_kib("VmRSS") * 1024, hwm_bytes=_proc_status_kib("VmHWM") * 1024)


def _cpu_busy_seconds():
    """CPU seconds all processes on the machine have run (user+nice+system+irq+softirq+steal), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def others_busy_cores(window_s):
    """Cores' worth of CPU the rest of the machine used over `window_s` (this process sleeping meanwhile)."""
    b0, t0 = _cpu_busy_seconds(), time.time()
    time.sleep(window_s)
    return (_cpu_busy_seconds() - b0) / (time.time() - t0)


class MallocSampler:
    """Polls mallinfo2 from a Python thread while torch runs (torch releases the GIL inside ops and autograd
    runs on its own thread), keeping the peaks of bytes in use and bytes obtained."""

    def __init__(self, period_s=0.0005):
        self.period_s, self.peak_in_use, self.peak_obtained, self.samples = period_s, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            in_use, obtained = _mallinfo()
            self.peak_in_use = max(self.peak_in_use, in_use)
            self.peak_obtained = max(self.peak_obtained, obtained)
            self.samples += 1
            time.sleep(self.period_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


# ---- one training case (child process) ------------------------------------------------------------------
def build_fp32_case(model_name, method, micro_batch, seq_len, threads):
    """The grid's fp32 training setup, built in the order run_case builds it (the heap tools replay that order):
    seeded model, LoRA adapters for a LoRA method, AdamW over what trains, one batch of tokens."""
    import torch
    sys.path.insert(0, HERE)
    from llama_torch import LlamaLM, apply_lora

    torch.manual_seed(0)
    torch.set_num_threads(threads)
    cfg = MODELS[model_name]
    model = LlamaLM(cfg)
    if method in LORAS:
        lora = LORAS[method]
        apply_lora(model, lora["targets"], lora["rank"], lora["alpha"])
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    tokens = torch.randint(0, cfg["vocab_size"], (micro_batch, seq_len))
    return model, opt, tokens


def run_case(spec):
    stages = {}
    stages["start"] = _rss()
    import torch
    sys.path.insert(0, HERE)
    from llama_torch import LlamaLM, apply_lora, count_params

    torch.manual_seed(0)
    torch.set_num_threads(spec["threads"])
    stages["after_import"] = _rss()
    malloc_before_model = _mallinfo()
    cfg = MODELS[spec["model"]]
    model = LlamaLM(cfg)
    if spec["method"] in LORAS:
        lora = LORAS[spec["method"]]
        apply_lora(model, lora["targets"], lora["rank"], lora["alpha"])
    if spec["precision"] == "bf16-pure":
        model = model.to(torch.bfloat16)
    total, trainable = count_params(model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    tokens = torch.randint(0, cfg["vocab_size"], (spec["micro_batch"], spec["seq_len"]))
    stages["after_model"] = _rss()
    autocast = spec["precision"] == "bf16"

    def step():
        opt.zero_grad(set_to_none=True)
        if autocast:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(tokens)
        else:
            loss = model(tokens)
        loss.backward()
        opt.step()
        if not torch.isfinite(loss.float()):
            raise SystemExit("loss is not finite")

    warmup_s, times, loads, cpu_share, others = [], [], [], [], []
    for _ in range(spec["warmup"]):
        t0 = time.perf_counter()
        step()
        warmup_s.append(time.perf_counter() - t0)
    stages["after_warmup"] = _rss()
    # At least min_steps timed steps; more (up to max_steps) while they add up to less than min_seconds.
    while len(times) < spec["max_steps"] and (len(times) < spec["min_steps"] or sum(times) < spec["min_seconds"]):
        t0, c0, b0 = time.perf_counter(), time.process_time(), _cpu_busy_seconds()
        step()
        times.append(time.perf_counter() - t0)
        # CPU seconds other processes ran per second of the step (clock-tick resolution: 10 ms).
        others.append(max(0.0, (_cpu_busy_seconds() - b0) - (time.process_time() - c0)) / times[-1])
        # CPU seconds of all the process's threads per wall second and thread: near 1 when the step had its
        # cores to itself (OpenMP workers spin while they wait), lower when it was preempted.
        cpu_share.append((time.process_time() - c0) / times[-1] / spec["threads"])
        loads.append(os.getloadavg()[0])
    stages["after_timed"] = _rss()
    # One more step with the malloc sampler running (not timed: the sampler takes CPU time).
    with MallocSampler() as ms:
        step()
    stages["after_sampled"] = _rss()
    print(json.dumps(dict(params_total=total, params_trainable=trainable, step_seconds=times, load_1min=loads, cpu_share=cpu_share, others_cores=others,
                          warmup_seconds=warmup_s, rss=stages,
                          peak_rss_bytes=stages["after_timed"]["hwm_bytes"],
                          rss_before_model_bytes=stages["after_import"]["rss_bytes"],
                          malloc_before_model=dict(in_use=malloc_before_model[0], obtained=malloc_before_model[1]),
                          malloc_peak=dict(in_use=ms.peak_in_use, obtained=ms.peak_obtained, samples=ms.samples),
                          threads=torch.get_num_threads(), torch=torch.__version__)))


# ---- microbenchmarks (child process per thread count) ----------------------------------------------------
GEMM_SHAPES = [  # (m, n, k): activations x weight^T shapes of the grid's models, and square references
    (256, 384, 384), (256, 1024, 384), (512, 512, 512), (512, 1536, 512), (1024, 768, 768), (1024, 2048, 768),
    (256, 2816, 1024), (128, 5632, 2048), (128, 2048, 2048), (1024, 1024, 1024), (2048, 2048, 2048),
    (256, 32000, 512), (512, 8, 512), (512, 512, 8), (8, 512, 512),
]
ELEMENTWISE_SIZES = [2 ** e for e in (6, 10, 14, 17, 20, 22, 23, 24, 25)]   # elements


def _time_call(fn, min_seconds=0.15, repeats=5):
    """Median seconds per call over `repeats` batches, each batch running for at least min_seconds."""
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_seconds / 3:
        fn()
        n += 1
    per_batch = max(1, int(n * 3))
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            fn()
        out.append((time.perf_counter() - t0) / per_batch)
    return statistics.median(out), out


def run_micro(threads):
    import torch
    torch.set_num_threads(threads)
    rows = []

    mark = [time.perf_counter(), time.process_time(), _cpu_busy_seconds()]

    def add(kind, dtype, shape, seconds, samples, rate, rate_unit):
        # Other processes' CPU (cores) since the previous row: the measurement's disturbance.
        wall, cpu, busy = time.perf_counter(), time.process_time(), _cpu_busy_seconds()
        others = max(0.0, (busy - mark[2]) - (cpu - mark[1])) / max(1e-9, wall - mark[0])
        mark[:] = [wall, cpu, busy]
        rows.append(dict(kind=kind, dtype=dtype, threads=threads, shape=shape, seconds=seconds, rate=rate,
                         rate_unit=rate_unit, samples=samples, load_1min=os.getloadavg()[0], others_cores=others))

    for dtype_name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for m, n, k in GEMM_SHAPES:
            a = torch.randn(m, k).to(dtype)
            w = torch.randn(n, k).to(dtype)
            med, samples = _time_call(lambda: torch.nn.functional.linear(a, w))
            add("gemm", dtype_name, f"{m}x{n}x{k}", med, samples, 2.0 * m * n * k / med / 1e9, "GFLOP/s")
        for size in ELEMENTWISE_SIZES:
            a = torch.randn(size).to(dtype)
            b = torch.randn(size).to(dtype)
            el = a.element_size()
            for op, fn, bytes_per in (("add", lambda: a + b, 3), ("mul_scalar", lambda: a * 0.5, 2),
                                      ("silu", lambda: torch.nn.functional.silu(a), 2),
                                      ("exp", lambda: torch.exp(a), 2)):
                med, samples = _time_call(fn, min_seconds=0.1)
                add("elementwise_" + op, dtype_name, str(size), med, samples, bytes_per * el * size / med / 1e9, "GB/s")
            out = torch.empty_like(a)
            med, samples = _time_call(lambda: torch.add(a, b, out=out), min_seconds=0.1)
            add("elementwise_add_out", dtype_name, str(size), med, samples, 3 * el * size / med / 1e9, "GB/s")
            rows_ = max(1, size // 1024)
            s = torch.randn(rows_, min(size, 1024)).to(dtype)
            med, samples = _time_call(lambda: torch.softmax(s, dim=-1), min_seconds=0.1)
            add("softmax_rows1024", dtype_name, str(s.numel()), med, samples, 2 * el * s.numel() / med / 1e9, "GB/s")
    # Dispatch: the cost of an op on a one-element tensor, plain and with autograd recording it, and of
    # its backward (a tiny graph of 100 ops run backward).
    x = torch.ones(1)
    med, samples = _time_call(lambda: x + x)
    add("dispatch_op", "fp32", "1", med, samples, 0, "")
    xg = torch.ones(1, requires_grad=True)
    med, samples = _time_call(lambda: xg * 1.5)
    add("dispatch_op_autograd", "fp32", "1", med, samples, 0, "")

    def chain_backward():
        y = xg
        for _ in range(100):
            y = y * 1.0001
        y.backward()
    med, samples = _time_call(chain_backward)
    add("dispatch_chain100_forward_backward", "fp32", "100", med, samples, 0, "")
    print(json.dumps(rows))


# ---- job files and the parent ----------------------------------------------------------------------------
def job_yaml(model_name, method, precision, micro_batch, seq, threads):
    cfg = MODELS[model_name]
    lines = ["# CPU ground truth written by tools/groundtruth/cpu_collect.py", "model:"]
    for k, v in cfg.items():
        lines.append(f"  {k}: {json.dumps(v)}")
    lines += ["train:", f"  method: {'lora' if method in LORAS else method}"]
    if method in LORAS:
        lora = LORAS[method]
        lines.append(f"  lora: {{rank: {lora['rank']}, alpha: {lora['alpha']}, targets: [{', '.join(lora['targets'])}]}}")
    if precision == "fp32":
        lines += ["  precision: fp32", "  weights: pure              # fp32 parameters, no low-precision copy"]
    elif precision == "bf16":
        lines += ["  precision: bf16", "  weights: mixed             # fp32 parameters, torch.autocast(\"cpu\", bfloat16)"]
    else:
        lines += ["  precision: bf16", "  weights: pure              # parameters, gradients and AdamW state in bf16"]
    system = "../system.yaml" if threads == 2 else "../system-1thread.yaml"
    lines += [
        "  optimizer: adamw",
        "  optimizer_impl: for_loop    # torch.optim.AdamW on CPU tensors: foreach only for CUDA (torch/optim/adamw.py)",
        f"  micro_batch: {micro_batch}",
        f"  global_batch: {micro_batch}",
        f"  seq_len: {seq}",
        "  packing: true",
        "  activation_checkpointing: none",
        "  attention: eager            # the score matrix is materialised",
        "  loss: standard",
        "  framework: generic",
        "hardware:",
        f"  system: {system}        # relative to this job file; this machine ({threads} thread{'s' if threads > 1 else ''})",
        "  nodes: 1",
    ]
    return "\n".join(lines) + "\n"


def child_env(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def run_child(args, threads):
    cmd = [sys.executable, os.path.abspath(__file__)] + args
    res = subprocess.run(cmd, capture_output=True, text=True, env=child_env(threads))
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    return json.loads(res.stdout.strip().splitlines()[-1])


# A timed step counts when the process had its cores for it: CPU seconds per wall second and thread at least
# this (a step that waited for other processes measures the machine's load, not the model).
MIN_CPU_SHARE = 0.85
# ... and the rest of the machine stayed below this many cores during the step (others on the second core slow a
# 1-thread step down too: the VM's cores share caches and memory).
MAX_OTHERS_CORES = 0.15


def clean(r, i):
    return r["cpu_share"][i] >= MIN_CPU_SHARE and r.get("others_cores", [0.0] * (i + 1))[i] < MAX_OTHERS_CORES


def kept_steps(runs):
    """The step samples of all runs that had the machine to themselves; all samples when none did."""
    kept = [t for r in runs for i, t in enumerate(r["step_seconds"]) if clean(r, i)]
    return (kept, True) if kept else ([t for r in runs for t in r["step_seconds"]], False)


def write_outputs(out, raw, host):
    rows = []
    for cid, case in raw["cases"].items():
        spec, runs = case["spec"], case["runs"]
        steps, clean_ = kept_steps(runs)
        median = statistics.median(steps)
        job_rel = f"jobs/{cid}.yaml"
        with open(os.path.join(out, job_rel), "w") as f:
            f.write(job_yaml(spec["model"], spec["method"], spec["precision"], spec["micro_batch"], spec["seq_len"],
                             spec["threads"]))
        dates = sorted({r["date"] for r in runs})
        source = f"tools/groundtruth/cpu_collect.py on {host}, {', '.join(dates)}"
        r0 = runs[0]
        per_run = "; ".join(
            f"run {i + 1}: samples s {' '.join(f'{t:.3f}' for t in r['step_seconds'])}, load (1 min) "
            f"{' '.join(f'{x:.1f}' for x in r['load_1min'])}, CPU share {' '.join(f'{x:.2f}' for x in r['cpu_share'])}, "
            f"other processes (cores) {' '.join(f'{x:.2f}' for x in r.get('others_cores', []))}"
            for i, r in enumerate(runs))
        # A step whose process did not get its cores measures the machine's load, not the step: no step row then
        # (the memory rows stay: they do not depend on the load).
        had_cores = any(share >= MIN_CPU_SHARE for r in runs for share in r["cpu_share"])
        if had_cores:
            rows.append(dict(id=f"{cid}-step", job=job_rel, quantity="step_seconds", measured=f"{median:.4f}", unit="s",
                             source=source,
                             note=f"median of {len(steps)} timed steps "
                                  f"{f'with CPU share >= {MIN_CPU_SHARE} and other processes below {MAX_OTHERS_CORES} cores' if clean_ else '(none had the machine to itself: all kept)'} "
                                  f"over {len(runs)} run(s); {per_run}; params {r0['params_total']} trainable "
                                  f"{r0['params_trainable']}; {r0['threads']} threads; torch {r0['torch']}"))
        shared = "" if had_cores else f" (no step row: no timed step had CPU share >= {MIN_CPU_SHARE}; {per_run})"
        rss = statistics.median(r["peak_rss_bytes"] for r in runs)
        rss_runs = " ".join(f"{r['peak_rss_bytes'] / 2**30:.3f}" for r in runs)
        rows.append(dict(id=f"{cid}-rss", job=job_rel, quantity="device_used", measured=f"{rss / 2**30:.4f}",
                         unit="GiB", source=source,
                         note=f"peak RSS of the process (VmHWM) over warm-up and timed steps, median of {len(runs)} run(s) "
                              f"({rss_runs}); after "
                              f"importing torch {r0['rss_before_model_bytes'] / 2**30:.3f} GiB{shared}"))
        in_use = statistics.median(r["malloc_peak"]["in_use"] - r["malloc_before_model"]["in_use"] for r in runs)
        rows.append(dict(id=f"{cid}-alloc", job=job_rel, quantity="allocated_peak", measured=f"{in_use / 2**30:.4f}",
                         unit="GiB", source=source,
                         note=f"peak of malloc's bytes in use (mallinfo2 uordblks+hblkhd polled every 0.5 ms over one "
                              f"step) minus the same before the model was built, median of {len(runs)} run(s); "
                              f"includes Python objects made during the step"))
    with open(os.path.join(out, "cases.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "job", "quantity", "measured", "unit", "source", "note"])
        w.writeheader()
        w.writerows(rows)
    if raw.get("micro"):
        with open(os.path.join(out, "microbench.csv"), "w", newline="") as f:
            fields = ["kind", "dtype", "threads", "shape", "seconds", "rate", "rate_unit", "load_1min", "others_cores",
                      "samples"]
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for row in raw["micro"]:
                w.writerow({k: (" ".join(f"{x:.3e}" for x in row[k]) if k == "samples" else
                                (f"{row[k]:.4g}" if isinstance(row[k], float) else row.get(k, ""))) for k in fields})
    with open(os.path.join(out, "raw.json"), "w") as f:
        json.dump(raw, f, indent=1)


def wait_for_quiet(max_others, window_s=10):
    """Seconds waited until the rest of the machine used less than `max_others` cores over `window_s` (no wait
    without a limit)."""
    t0 = time.time()
    while max_others is not None and others_busy_cores(window_s) >= max_others:
        pass
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="run only the case ids containing this text")
    ap.add_argument("--resume", action="store_true", help="keep the runs already in raw.json; add the missing ones")
    ap.add_argument("--runs", type=int, default=1, help="runs per case (with --resume: up to this many in all)")
    ap.add_argument("--clean-steps", type=int, default=0,
                    help="with --runs: run a case again only while it has fewer timed steps than this that had the "
                         "machine to themselves")
    ap.add_argument("--quiet", type=float, default=None,
                    help="before each case, wait until the other processes use less than this many cores over 10 s (the "
                         "machine is shared: steps measured while others run are up to 2x slower, 1 thread or 2)")
    ap.add_argument("--threads", type=int, default=None, help="run only the cases (and microbenchmarks) with this many threads")
    ap.add_argument("--memory-only", action="store_true",
                    help="one warm-up step and one timed step per case: RSS and malloc peaks (they do not depend on "
                         "what else runs on the machine); step times from such a pass are not kept as ground truth")
    ap.add_argument("--micro-only", action="store_true")
    ap.add_argument("--no-micro", action="store_true")
    ap.add_argument("--case", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--micro", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        run_case(json.loads(args.case))
        return
    if args.micro:
        run_micro(args.micro)
        return
    host = socket.gethostname().split(".")[0]
    out = args.out or os.path.join(REPO, "validation", "measured", f"cpu-{host}")
    os.makedirs(os.path.join(out, "jobs"), exist_ok=True)
    raw_path = os.path.join(out, "raw.json")
    raw = None
    if args.resume and os.path.exists(raw_path):
        with open(raw_path) as f:
            raw = json.load(f)
        if "grid" not in raw:
            raw = None   # an older file: start over
    if raw is None:
        raw = dict(host=host, cpu=platform.processor() or platform.machine(), python=sys.version.split()[0],
                   grid=True, nice=os.nice(0), cases={}, micro=[])
    if not args.micro_only:
        for model, method, precision, mb, seq, threads in GRID:
            cid = case_id(model, method, precision, mb, seq, threads)
            prior = raw["cases"].get(cid, {}).get("runs", [])
            enough_clean = args.clean_steps and prior and sum(
                clean(r, i) for r in prior for i in range(len(r["step_seconds"]))) >= args.clean_steps
            if (args.only and args.only not in cid) or len(prior) >= args.runs or enough_clean or \
                    (args.threads and threads != args.threads):
                continue
            spec = dict(model=model, method=method, precision=precision, micro_batch=mb, seq_len=seq, threads=threads,
                        warmup=2 if MODELS[model]["hidden_size"] < 2048 else 1, min_steps=5 if model != "llama-0.9b" else 3,
                        max_steps=9, min_seconds=8.0)
            if args.memory_only:
                spec.update(warmup=1, min_steps=1, max_steps=1, min_seconds=0.0)
            waited = wait_for_quiet(args.quiet)
            t0 = time.time()
            load_before = os.getloadavg()
            try:
                r = run_child(["--case", json.dumps(spec)], threads)
            except RuntimeError as e:
                print(f"{cid}: failed\n{e}", file=sys.stderr)
                continue
            r.update(waited_for_load_seconds=waited, date=time.strftime("%Y-%m-%d"), load_before=load_before, load_after=os.getloadavg(),
                     wall_seconds=time.time() - t0)
            raw["cases"].setdefault(cid, dict(spec=spec, runs=[]))["runs"].append(r)
            write_outputs(out, raw, host)
            print(f"{cid}: median step {statistics.median(r['step_seconds']):.3f} s, CPU share "
                  f"{min(r['cpu_share']):.2f}-{max(r['cpu_share']):.2f}, others {max(r['others_cores']):.2f} cores, "
                  f"peak RSS {r['peak_rss_bytes'] / 2**30:.3f} GiB, "
                  f"load {load_before[0]:.1f} ({time.time() - t0:.0f} s)", flush=True)
    if not args.no_micro and not args.only:
        for threads in (1, 2):
            if args.threads and threads != args.threads:
                continue
            wait_for_quiet(args.quiet)
            raw["micro"] = [r for r in raw.get("micro", []) if r["threads"] != threads]
            raw["micro"] += run_child(["--micro", str(threads)], threads)
            print(f"microbenchmarks, {threads} thread(s): done", flush=True)
    write_outputs(out, raw, host)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
