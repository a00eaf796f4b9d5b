#!/usr/bin/env python3
"""Per-op trace of glibc's heap during cpu_collect's training step: after every ATen op, malloc's bytes in use and
bytes obtained from the kernel (mallinfo2). Shows where the gap between the two (what peak RSS holds beyond the
live tensors) opens, per phase of each step (zero_grad, forward with loss, backward, optimizer). With --free-chunks, also the sizes of the free chunks glibc
holds (malloc_info) at the start of the last step's forward and at its loss: what the held memory is made of.

    /usr/bin/python3 tools/groundtruth/heap_trace.py llama-58m full 8 128
    /usr/bin/python3 tools/groundtruth/heap_trace.py llama-58m full 8 128 --free-chunks
"""
import argparse
import collections
import ctypes
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_collect  # noqa: E402  (the grid's models, LoRA settings and mallinfo2 reader)

GIB = 2 ** 30


def free_chunk_histogram():
    """glibc's free chunks of the main arena, from malloc_info(3): [(from_bytes, to_bytes, total_bytes, count)]."""
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile(suffix=".xml") as tmp:
        f = libc.fopen(tmp.name.encode(), b"w")
        libc.malloc_info(0, ctypes.c_void_p(f))
        libc.fclose(ctypes.c_void_p(f))
        xml = open(tmp.name).read()
    main_arena = xml.split('<heap nr="1">')[0]
    return [tuple(int(v) for v in m) for m in re.findall(r'<size from="(\d+)" to="(\d+)" total="(\d+)" count="(\d+)"/>', main_arena)]


def print_free_chunks(label, histogram, min_total=2 ** 20):
    total = sum(h[2] for h in histogram)
    print(f"free chunks of the main arena {label}: {sum(h[3] for h in histogram)} chunks, {total / GIB:.3f} GiB; size classes holding >= 1 MiB:")
    for lo, hi, size, count in histogram:
        if size >= min_total:
            print(f"    {lo / 2 ** 20:8.2f} - {hi / 2 ** 20:8.2f} MiB: {count:4d} chunks, {size / 2 ** 20:8.1f} MiB")


def traced_steps(model_name, method, micro_batch, seq_len, steps, threads, free_chunks=False, phases_only=False):
    import contextlib

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    model, opt, tokens = cpu_collect.build_fp32_case(model_name, method, micro_batch, seq_len, threads)
    samples, phase = [], ["init"]

    class AfterEachOp(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            in_use, obtained = cpu_collect._mallinfo()
            samples.append((phase[0], in_use, obtained))
            return out

    def phase_end():  # --phases-only: one sample as each phase ends, no Python between the ops
        if phases_only:
            samples.append((phase[0], *cpu_collect._mallinfo()))

    for step in range(steps):
        with contextlib.nullcontext() if phases_only else AfterEachOp():
            phase[0] = f"step {step} zero_grad"
            opt.zero_grad(set_to_none=True)
            phase_end()
            phase[0] = f"step {step} forward"
            if free_chunks and step == steps - 1:
                print_free_chunks(f"at the start of step {step}'s forward", free_chunk_histogram())
            loss = model(tokens)
            phase_end()
            if free_chunks and step == steps - 1:
                print_free_chunks(f"at step {step}'s loss (the peak)", free_chunk_histogram())
            phase[0] = f"step {step} backward"
            loss.backward()
            phase_end()
            phase[0] = f"step {step} optimizer"
            opt.step()
            phase_end()
        del loss
    return samples


def summarise(samples):
    phases = collections.OrderedDict()
    for name, in_use, obtained in samples:
        p = phases.setdefault(name, dict(first=(in_use, obtained), peak=(0, 0), obtained_max=0))
        if in_use > p["peak"][0]:
            p["peak"] = (in_use, obtained)
        p["obtained_max"] = max(p["obtained_max"], obtained)
    print(f"{'phase':22s} {'in use at start':>16s} {'free at start':>14s} {'peak in use':>12s} {'free at peak':>13s} {'obtained max':>13s}  (GiB)")
    for name, p in phases.items():
        print(f"{name:22s} {p['first'][0] / GIB:16.3f} {(p['first'][1] - p['first'][0]) / GIB:14.3f} "
              f"{p['peak'][0] / GIB:12.3f} {(p['peak'][1] - p['peak'][0]) / GIB:13.3f} {p['obtained_max'] / GIB:13.3f}")
    peak_in_use = max(s[1] for s in samples)
    peak_obtained = max(s[2] for s in samples)
    print(f"whole run: peak in use {peak_in_use / GIB:.3f} GiB, peak obtained {peak_obtained / GIB:.3f} GiB, "
          f"held beyond the live peak {(peak_obtained - peak_in_use) / GIB:.3f} GiB; "
          f"VmHWM {cpu_collect._rss()['hwm_bytes'] / GIB:.3f} GiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=sorted(cpu_collect.MODELS))
    ap.add_argument("method", choices=["full"] + sorted(cpu_collect.LORAS))
    ap.add_argument("micro_batch", type=int)
    ap.add_argument("seq_len", type=int)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--free-chunks", action="store_true", help="print malloc_info's free-chunk sizes at the last forward's start and loss")
    ap.add_argument("--phases-only", action="store_true",
                    help="sample only as each phase ends, with no Python after every op (the per-op hook's own small "
                         "objects move what the heap holds; the phase peaks are then the ends of the phases)")
    args = ap.parse_args()
    summarise(traced_steps(args.model, args.method, args.micro_batch, args.seq_len, args.steps, args.threads,
                           args.free_chunks, args.phases_only))


if __name__ == "__main__":
    main()
