#!/usr/bin/python3
"""CPU ground truth for ftbound: full and LoRA training steps of small Llama-architecture models on this
machine's CPU (Debian's python3-torch; no downloads), measuring the median step time and peak RSS.

Writes validation/measured/cpu-<host>/: jobs/*.yaml (CONTRACT.md job files), cases.csv (step_seconds and
tokens_per_second rows; peak RSS in the note), raw.json (every step time, RSS, versions). The job files
name `hardware.system: ../system.yaml` (relative to the job file), the file `ftbound probe --out` writes for this machine.

    /usr/bin/python3 tools/groundtruth/cpu_collect.py [--out DIR] [--steps 5] [--warmup 2]

Each case runs in its own process so that its peak RSS (ru_maxrss) is its own.
"""
import argparse
import csv
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Two small Llama-architecture configurations (config.json fields). Vocabulary 32000 as Llama 2.
MODELS = {
    "llama-23m": dict(model_type="llama", hidden_size=384, intermediate_size=1024, num_hidden_layers=6,
                      num_attention_heads=6, num_key_value_heads=6, vocab_size=32000, tie_word_embeddings=True,
                      rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=2048),
    "llama-58m": dict(model_type="llama", hidden_size=512, intermediate_size=1536, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=4, vocab_size=32000, tie_word_embeddings=False,
                      rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=2048),
}
LORA = dict(rank=8, alpha=16, targets=["q_proj", "k_proj", "v_proj", "o_proj"])
SEQ = 256
CASES = [  # (id, model, method, micro_batch)
    ("cpu-23m-full-b1", "llama-23m", "full", 1),
    ("cpu-23m-full-b4", "llama-23m", "full", 4),
    ("cpu-23m-lora-b4", "llama-23m", "lora", 4),
    ("cpu-58m-full-b2", "llama-58m", "full", 2),
    ("cpu-58m-lora-b2", "llama-58m", "lora", 2),
]


def run_case(model_name, method, micro_batch, steps, warmup):
    """Runs in a child process: builds the model, times the steps, prints one JSON line."""
    import torch
    sys.path.insert(0, HERE)
    from llama_torch import LlamaLM, apply_lora, count_params

    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count())
    rss_before_model_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cfg = MODELS[model_name]
    model = LlamaLM(cfg)
    if method == "lora":
        apply_lora(model, LORA["targets"], LORA["rank"], LORA["alpha"])
    total, trainable = count_params(model)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    tokens = torch.randint(0, cfg["vocab_size"], (micro_batch, SEQ))
    times = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(tokens)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        if step >= warmup:
            times.append(dt)
        if not torch.isfinite(loss):
            raise SystemExit("loss is not finite")
    peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux reports KiB
    print(json.dumps(dict(params_total=total, params_trainable=trainable, step_seconds=times,
                          peak_rss_bytes=peak_rss_kib * 1024, rss_before_model_bytes=rss_before_model_kib * 1024,
                          threads=torch.get_num_threads(), torch=torch.__version__)))


def job_yaml(model_name, method, micro_batch):
    cfg = MODELS[model_name]
    lines = ["# CPU ground truth written by tools/groundtruth/cpu_collect.py", "model:"]
    for k, v in cfg.items():
        lines.append(f"  {k}: {json.dumps(v)}")
    lines += ["train:", f"  method: {method}"]
    if method == "lora":
        lines.append(f"  lora: {{rank: {LORA['rank']}, alpha: {LORA['alpha']}, targets: [{', '.join(LORA['targets'])}]}}")
    lines += [
        "  precision: fp32",
        "  weights: pure              # fp32 parameters, no low-precision copy",
        "  optimizer: adamw",
        f"  micro_batch: {micro_batch}",
        f"  global_batch: {micro_batch}",
        f"  seq_len: {SEQ}",
        "  packing: true",
        "  activation_checkpointing: none",
        "  attention: eager            # the score matrix is materialised",
        "  loss: standard",
        "  framework: generic",
        "hardware:",
        "  system: ../system.yaml        # relative to this job file; written by `ftbound probe --out` on this machine",
        "  nodes: 1",
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--case", nargs=3, metavar=("MODEL", "METHOD", "MICRO_BATCH"), help=argparse.SUPPRESS)
    ap.add_argument("--only", default=None, help="run only the case ids containing this text")
    args = ap.parse_args()
    if args.case:
        run_case(args.case[0], args.case[1], int(args.case[2]), args.steps, args.warmup)
        return
    host = socket.gethostname().split(".")[0]
    out = args.out or os.path.join(REPO, "validation", "measured", f"cpu-{host}")
    os.makedirs(os.path.join(out, "jobs"), exist_ok=True)
    raw = dict(host=host, cpu=platform.processor() or platform.machine(), python=sys.version.split()[0],
               seq_len=SEQ, steps=args.steps, warmup=args.warmup, cases={})
    rows = []
    for case_id, model_name, method, mb in CASES:
        if args.only and args.only not in case_id:
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--case", model_name, method, str(mb),
               "--steps", str(args.steps), "--warmup", str(args.warmup)]
        t0 = time.time()
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(f"{case_id}: failed\n{res.stderr}", file=sys.stderr)
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        raw["cases"][case_id] = r
        median = statistics.median(r["step_seconds"])
        tokens = mb * SEQ
        job_rel = f"jobs/{case_id}.yaml"
        with open(os.path.join(out, job_rel), "w") as f:
            f.write(job_yaml(model_name, method, mb))
        samples = " ".join(f"{t:.3f}" for t in r["step_seconds"])
        note = (f"peak RSS {r['peak_rss_bytes'] / 2**30:.3f} GiB (before the model {r['rss_before_model_bytes'] / 2**30:.3f} GiB); "
                f"params {r['params_total']} trainable {r['params_trainable']}; {r['threads']} threads; torch {r['torch']}; "
                f"step samples s: {samples}")
        source = f"tools/groundtruth/cpu_collect.py on {host}, {time.strftime('%Y-%m-%d')}"
        rows.append(dict(id=f"{case_id}-step", job=job_rel, quantity="step_seconds", measured=f"{median:.4f}", unit="s",
                         source=source, note=note))
        rows.append(dict(id=f"{case_id}-tps", job=job_rel, quantity="tokens_per_second", measured=f"{tokens / median:.1f}",
                         unit="tokens/s", source=source, note=f"{tokens} tokens per step / median step time"))
        print(f"{case_id}: median step {median:.3f} s, peak RSS {r['peak_rss_bytes'] / 2**30:.3f} GiB, "
              f"params {r['params_total'] / 1e6:.1f} M ({time.time() - t0:.0f} s)", flush=True)
    with open(os.path.join(out, "cases.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "job", "quantity", "measured", "unit", "source", "note"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "raw.json"), "w") as f:
        json.dump(raw, f, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
