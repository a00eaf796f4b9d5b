#!/usr/bin/env python3
"""Who holds memalign's small pieces, and for how long: runs cpu_collect's training step under an LD_PRELOAD malloc
log (malloc_log.c) and, for each tensor (a posix_memalign), finds the small objects (chunks of at most 128 bytes)
that take its tail piece (the chunk right after the tensor's) or its lead piece (the chunk right before), and when
they are freed: in which phase (zero_grad, forward, backward, optimizer, del = `loss` dropped after opt.step()),
and whether the tensor was still live. The ASSUMPTION in src/memory/glibc_heap.hpp rests on it.

    /usr/bin/python3 tools/groundtruth/piece_holders.py llama-23m full 1 256
"""
import argparse
import collections
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = {1: "zero_grad", 2: "forward", 3: "backward", 4: "optimizer", 5: "del"}
MARK = 987654000


def child(model_name, method, micro_batch, seq_len, steps):
    sys.path.insert(0, HERE)
    import cpu_collect
    libc = ctypes.CDLL(None)   # the preloaded malloc, not libc's own
    libc.malloc.restype = ctypes.c_void_p
    # one thread: one arena
    model, opt, tokens = cpu_collect.build_fp32_case(model_name, method, micro_batch, seq_len, threads=1)
    libc.malloc(MARK)
    for step in range(steps):
        libc.malloc(MARK + 10 * step + 1)
        opt.zero_grad(set_to_none=True)
        libc.malloc(MARK + 10 * step + 2)
        loss = model(tokens)
        libc.malloc(MARK + 10 * step + 3)
        loss.backward()
        libc.malloc(MARK + 10 * step + 4)
        opt.step()
        libc.malloc(MARK + 10 * step + 5)
        del loss


def chunk_bytes(n):  # request2size
    return max(32, (n + 8 + 15) & ~15)


def analyse(path, step):
    import numpy as np
    records = np.fromfile(path, dtype=np.uint64).reshape(-1, 4)
    phase, nid = "start", 0
    tensors, tinfo, alive, tail_at, lead_end = {}, {}, set(), {}, {}
    holders, holder_of = collections.defaultdict(set), {}
    freed_holders, freed_tensors = collections.Counter(), collections.Counter()
    prefix = f"step{step} "
    for op, a, b, c in records.tolist():
        if op == 9:
            phase = f"step{a // 10} {NAMES.get(a % 10, '?')}" if a else "start"
        elif op == 3:
            nid += 1
            tensors[b], tinfo[nid] = nid, phase
            alive.add(nid)
            tail_at[b - 16 + chunk_bytes(a)] = nid
            lead_end[b - 16] = nid
        elif op in (1, 4) and b and chunk_bytes(a) <= 128:
            start, size = b - 16, chunk_bytes(a)
            for key, kind, table in ((start, "tail", tail_at), (start + size, "lead", lead_end)):
                if table.get(key) in alive:
                    holder_of[b] = (table[key], kind, phase)
                    holders[table[key]].add(b)
                    break
        elif op == 2 and a in tensors:
            tid = tensors.pop(a)
            alive.discard(tid)
            if tinfo[tid].startswith(prefix):
                freed_tensors[(tinfo[tid], phase, "a piece taken" if holders[tid] else "pieces free")] += 1
        elif op == 2 and a in holder_of:
            tid, kind, _ = holder_of.pop(a)
            holders[tid].discard(a)
            if tinfo[tid].startswith(prefix):
                freed_holders[(tinfo[tid], kind, phase, "tensor live" if tid in alive else "tensor freed")] += 1
        elif op == 5 and a in tensors:
            alive.discard(tensors.pop(a))
    print(f"step {step}: small objects holding a tensor's piece, freed (tensor made in, piece, freed in, tensor then):")
    for k, n in sorted(freed_holders.items()):
        print(f"  {k[0]:18s} {k[1]:4s} {k[2]:18s} {k[3]:12s} {n:6d}")
    print(f"step {step}: tensors at their free (made in, freed in, pieces):")
    for k, n in sorted(freed_tensors.items()):
        print(f"  {k[0]:18s} {k[1]:18s} {k[2]:13s} {n:6d}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("method")
    ap.add_argument("micro_batch", type=int)
    ap.add_argument("seq_len", type=int)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.model, args.method, args.micro_batch, args.seq_len, args.steps)
    with tempfile.TemporaryDirectory() as tmp:
        shim, log = os.path.join(tmp, "malloc_log.so"), os.path.join(tmp, "log.bin")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "malloc_log.c"), "-o", shim], check=True)
        env = dict(os.environ, LD_PRELOAD=shim, MLOG_OUT=log, OMP_NUM_THREADS="1")
        subprocess.run([sys.executable, __file__, "--child", args.model, args.method, str(args.micro_batch),
                        str(args.seq_len), "--steps", str(args.steps)], check=True, env=env)
        analyse(log, min(1, args.steps - 1))


if __name__ == "__main__":
    main()
