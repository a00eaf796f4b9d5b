#!/usr/bin/env python3
"""GPU ground truth for ftbound: full fine-tune and LoRA steps of random-initialised Llama-architecture models
(about 1B, 3B and 8B, built from LlamaConfig: no downloads) in bf16 on one GPU, with batch, sequence and
recompute variations. Needs torch, transformers and peft. Sized to finish in one run of under 10 minutes on an
H100/H200-class GPU (each case is a handful of steps; the 8B model trains with LoRA only).

Per case (each in its own process, so memory peaks are its own) it records torch.cuda.max_memory_allocated,
torch.cuda.max_memory_reserved, the peak of nvidia-smi's used memory (polled during the steps), the median
step time over >= 5 steps after warm-up, and one PyTorch profiler trace of 3 steps. It writes
validation/measured/gpu-<host>/: jobs/*.yaml, cases.csv (CONTRACT.md columns), traces/*.json.gz, raw.json.

    python3 tools/groundtruth/gpu_collect.py [--out DIR] [--only TEXT] [--budget-seconds 540]
"""
import argparse
import csv
import gzip
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# config.json fields of the Llama 3.2 1B / 3B and Llama 3.1 8B releases (meta-llama on HuggingFace),
# without rope scaling (it does not change cost).
MODELS = {
    "llama-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                     num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, rope_theta=500000.0,
                     rms_norm_eps=1e-5, max_position_embeddings=131072),
    "llama-3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28, num_attention_heads=24,
                     num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True, rope_theta=500000.0,
                     rms_norm_eps=1e-5, max_position_embeddings=131072),
    "llama-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                     num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, rope_theta=500000.0,
                     rms_norm_eps=1e-5, max_position_embeddings=131072),
}
LORA = dict(rank=16, alpha=32, targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
# (id, model, method, micro_batch, seq_len, recompute). Full fine-tunes keep fp32 master weights and AdamW
# state (16 bytes per parameter), so only the 1B and 3B models are fully trained on one GPU.
CASES = [
    ("h-1b-full-b4-s2048", "llama-1b", "full", 4, 2048, False),
    ("h-1b-full-b8-s2048-ckpt", "llama-1b", "full", 8, 2048, True),
    ("h-1b-lora-b8-s2048", "llama-1b", "lora", 8, 2048, False),
    ("h-3b-full-b2-s2048", "llama-3b", "full", 2, 2048, False),
    ("h-3b-full-b4-s4096-ckpt", "llama-3b", "full", 4, 4096, True),
    ("h-3b-lora-b4-s2048", "llama-3b", "lora", 4, 2048, False),
    ("h-8b-lora-b2-s2048", "llama-8b", "lora", 2, 2048, False),
    ("h-8b-lora-b4-s4096-ckpt", "llama-8b", "lora", 4, 4096, True),
    ("h-8b-lora-b1-s8192", "llama-8b", "lora", 1, 8192, False),
]
WARMUP, STEPS, TRACE_STEPS = 3, 6, 3


class SmiPoller:
    """Peak of nvidia-smi's memory.used for one GPU, polled every 0.2 s while the steps run."""

    def __init__(self, index):
        self.index, self.peak_mib, self._stop = index, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                                      "-i", str(self.index)], capture_output=True, text=True, timeout=5).stdout
                self.peak_mib = max(self.peak_mib, int(out.strip().splitlines()[0]))
            except Exception:
                pass
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_case(case, trace_path):
    """Child process: one case. Prints one JSON line."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    case_id, model_name, method, mb, seq, recompute = case
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    cfg = LlamaConfig(**MODELS[model_name], use_cache=False)
    # Full fine-tune: fp32 parameters (master weights), bf16 autocast (HF Trainer with bf16=True).
    # LoRA: bf16 frozen base, adapters as peft creates them, bf16 autocast.
    param_dtype = torch.float32 if method == "full" else torch.bfloat16
    with dev:
        model = LlamaForCausalLM(cfg).to(param_dtype)
    if recompute:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method == "lora":
        from peft import LoraConfig, get_peft_model
        if recompute:
            model.enable_input_require_grads()
        model = get_peft_model(model, LoraConfig(r=LORA["rank"], lora_alpha=LORA["alpha"], lora_dropout=0.0,
                                                 target_modules=LORA["targets"], task_type="CAUSAL_LM"))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5)
    tokens = torch.randint(0, cfg.vocab_size, (mb, seq), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    times = []
    torch.cuda.reset_peak_memory_stats()
    with SmiPoller(0) as smi:
        for i in range(WARMUP + STEPS):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = step()
            torch.cuda.synchronize()
            if i >= WARMUP:
                times.append(time.perf_counter() - t0)
        allocated = torch.cuda.max_memory_allocated()
        reserved = torch.cuda.max_memory_reserved()
    if not torch.isfinite(loss).item():
        raise SystemExit("loss is not finite")
    # One profiler trace of TRACE_STEPS steps (after the timed steps, so it does not disturb them).
    from torch.profiler import ProfilerActivity, profile, schedule
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=TRACE_STEPS), record_shapes=False) as prof:
        for _ in range(1 + TRACE_STEPS):
            step()
            torch.cuda.synchronize()
            prof.step()
    raw_trace = trace_path[:-3]
    prof.export_chrome_trace(raw_trace)
    with open(raw_trace, "rb") as src, gzip.open(trace_path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw_trace)
    import transformers
    total = sum(p.numel() for p in model.parameters())
    print(json.dumps(dict(step_seconds=times, allocated_peak_bytes=allocated, reserved_peak_bytes=reserved,
                          device_used_bytes=smi.peak_mib * 2**20, params_total=total,
                          params_trainable=sum(p.numel() for p in params), gpu=torch.cuda.get_device_name(0),
                          torch=torch.__version__, transformers=transformers.__version__,
                          cuda=torch.version.cuda)))


def catalog_gpu(name, memory_bytes):
    n = name.upper()
    if "H200" in n:
        return "h200-nvl" if "NVL" in n else "h200-sxm"
    if "H100" in n:
        return "h100-nvl" if "NVL" in n else "h100-pcie" if "PCIE" in n else "h100-sxm"
    if "A100" in n:
        big = memory_bytes > 60 * 2**30
        return ("a100-pcie-" if "PCIE" in n else "a100-sxm-") + ("80gb" if big else "40gb")
    if "B200" in n:
        return "b200"
    return None


def job_yaml(case, gpu):
    case_id, model_name, method, mb, seq, recompute = case
    lines = ["# GPU ground truth written by tools/groundtruth/gpu_collect.py", "model:", "  model_type: llama"]
    lines += [f"  {k}: {json.dumps(v)}" for k, v in MODELS[model_name].items()]
    lines += ["train:", f"  method: {method}"]
    if method == "lora":
        lines.append(f"  lora: {{rank: {LORA['rank']}, alpha: {LORA['alpha']}, targets: [{', '.join(LORA['targets'])}]}}")
    lines += [
        "  precision: bf16",
        f"  weights: {'mixed' if method == 'full' else 'pure'}",
        "  optimizer: adamw",
        f"  micro_batch: {mb}",
        f"  global_batch: {mb}",
        f"  seq_len: {seq}",
        "  packing: true",
        f"  activation_checkpointing: {'full' if recompute else 'none'}",
        "  attention: sdpa",
        "  loss: fp32_upcast            # transformers' causal-LM loss upcasts the logits to fp32",
        "  framework: hf",
        "hardware:",
        f"  gpu: {gpu}",
        "  gpus_per_node: 1",
        "  nodes: 1",
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--budget-seconds", type=float, default=540, help="stop starting new cases after this")
    ap.add_argument("--case", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--trace", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        run_case(next(c for c in CASES if c[0] == args.case), args.trace)
        return
    host = socket.gethostname().split(".")[0]
    out = args.out or os.path.join(REPO, "validation", "measured", f"gpu-{host}")
    for sub in ("jobs", "traces"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    start = time.time()
    raw, rows = dict(host=host, warmup=WARMUP, steps=STEPS, cases={}, failed={}), []
    for case in CASES:
        case_id = case[0]
        if args.only and args.only not in case_id:
            continue
        if time.time() - start > args.budget_seconds:
            raw["failed"][case_id] = "not run: time budget spent"
            continue
        trace = os.path.join(out, "traces", f"{case_id}.json.gz")
        t0 = time.time()
        res = subprocess.run([sys.executable, os.path.abspath(__file__), "--case", case_id, "--trace", trace],
                             capture_output=True, text=True)
        if res.returncode != 0:
            tail = res.stderr.strip().splitlines()[-3:]
            raw["failed"][case_id] = " | ".join(tail)
            print(f"{case_id}: failed: {' | '.join(tail)}", file=sys.stderr, flush=True)
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        raw["cases"][case_id] = r
        gpu = catalog_gpu(r["gpu"], r["reserved_peak_bytes"]) or "h200-sxm"
        job_rel = f"jobs/{case_id}.yaml"
        with open(os.path.join(out, job_rel), "w") as f:
            f.write(job_yaml(case, gpu))
        median = statistics.median(r["step_seconds"])
        source = f"tools/groundtruth/gpu_collect.py on {host} ({r['gpu']}), {time.strftime('%Y-%m-%d')}"
        versions = f"torch {r['torch']}, transformers {r['transformers']}, CUDA {r['cuda']}"
        samples = " ".join(f"{t:.4f}" for t in r["step_seconds"])
        tokens = case[3] * case[4]
        for q, value, unit, note in [
            ("allocated_peak", r["allocated_peak_bytes"] / 2**30, "GiB", "torch.cuda.max_memory_allocated"),
            ("reserved_peak", r["reserved_peak_bytes"] / 2**30, "GiB", "torch.cuda.max_memory_reserved"),
            ("device_used", r["device_used_bytes"] / 2**30, "GiB", "peak nvidia-smi memory.used, polled every 0.2 s"),
            ("step_seconds", median, "s", f"median of {len(r['step_seconds'])} steps after {WARMUP} warm-up: {samples}"),
            ("tokens_per_second_per_gpu", tokens / median, "tokens/s", f"{tokens} tokens per step"),
        ]:
            rows.append(dict(id=f"{case_id}-{q}", job=job_rel, quantity=q, measured=f"{value:.4f}", unit=unit,
                             source=source, note=f"{note}; {versions}; trace traces/{case_id}.json.gz"))
        print(f"{case_id}: step {median:.3f} s, allocated {r['allocated_peak_bytes'] / 2**30:.2f} GiB, "
              f"reserved {r['reserved_peak_bytes'] / 2**30:.2f} GiB, smi {r['device_used_bytes'] / 2**30:.2f} GiB "
              f"({time.time() - t0:.0f} s)", flush=True)
    with open(os.path.join(out, "cases.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "job", "quantity", "measured", "unit", "source", "note"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "raw.json"), "w") as f:
        json.dump(raw, f, indent=1)
    print(f"wrote {out} in {time.time() - start:.0f} s; failed: {list(raw['failed'])}")


if __name__ == "__main__":
    main()
