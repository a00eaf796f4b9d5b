#!/usr/bin/env python3
"""Independent computation of the `diagnose` figures, to pin the C++ tests against.

A deliberately different design from src/trace: loads the whole document with json (times as exact
Decimals), builds interval *sets* per class (merge, union, intersection, difference) instead of a
counting sweep, and classifies idle gaps from the complement of the busy set. Definitions are the ones in
docs/diagnose.md. Usage: independent_figures.py TRACE.json[.gz] [...]  -> one JSON line per file.
"""
import gzip
import json
import sys
from decimal import Decimal

KERNEL_WAIT_NS = 30_000


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=Decimal)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def ns(us):
    return int((Decimal(us) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))


def merge(intervals):
    out = []
    for a, b in sorted(i for i in intervals if i[1] > i[0]):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(s):
    return sum(b - a for a, b in s)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if b > a:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def complement(s, w0, w1):
    out, cur = [], w0
    for a, b in s:
        if a > cur:
            out.append([cur, a])
        cur = max(cur, b)
    if cur < w1:
        out.append([cur, w1])
    return out


def figures(path):
    doc = load(path)
    events = doc["traceEvents"]
    gpu_cats = {"kernel": "kernel", "Kernel": "kernel", "gpu_memcpy": "memcpy", "Memcpy": "memcpy",
                "gpu_memset": "memset", "Memset": "memset"}
    ops, launches, steps, loader = [], {}, [], []
    # GPU-side flow ends carry the correlation as their id (fills ops whose args lack it).
    flow_at = {ns(e["ts"]): e["id"] for e in events
               if e.get("ph") in ("f", "t") and e.get("cat") in ("ac2g", "async_cpu_to_gpu")}
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, name, args = e.get("cat"), e.get("name", ""), e.get("args") or {}
        start = ns(e["ts"])
        end = start + ns(e.get("dur", 0))
        if cat in gpu_cats:
            kind = gpu_cats[cat]
            comm = kind == "kernel" and ("nccl" in name.lower() or "rccl" in name.lower() or "Collective name" in args)
            dev = args.get("device", e.get("pid"))
            ops.append(dict(kind=kind, comm=comm, start=start, end=end, dev=dev, name=name,
                            corr=args.get("correlation", flow_at.get(start, -1)), bytes=int(args.get("bytes", 0) or 0)))
        elif cat in ("cuda_runtime", "Runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = start
        elif cat in ("cpu_op", "user_annotation", "Operator", "python_function"):
            if name.startswith("ProfilerStep#"):
                steps.append((start, end))
            elif "DataLoader" in name:
                loader.append((start, end))
    busy = {}
    for o in ops:
        busy[o["dev"]] = busy.get(o["dev"], 0) + o["end"] - o["start"]
    dev = max(busy, key=busy.get)
    ops = [o for o in ops if o["dev"] == dev]
    w0, w1 = min(s for s, _ in steps), max(e for _, e in steps)
    clip = lambda o: [max(o["start"], w0), min(o["end"], w1)]
    K = merge(clip(o) for o in ops if o["kind"] == "kernel" and not o["comm"])
    C = merge(clip(o) for o in ops if o["comm"])
    M = merge(clip(o) for o in ops if o["kind"] != "kernel")
    KC = merge(K + C)
    ALL = merge(KC + M)
    W = w1 - w0
    comm_only = length(C) - length(intersect(C, K))
    copy_only = length(M) - length(intersect(M, KC))
    gaps = complement(ALL, w0, w1)
    starts = sorted(ops, key=lambda o: o["start"])
    host = kern = other = 0
    for a, b in gaps:
        nxt = [o for o in starts if o["start"] >= b]
        first = nxt[0]["start"] if nxt else None
        ends_gap = [o for o in nxt if o["start"] == first]
        ls = [launches[o["corr"]] for o in ends_gap if o["corr"] in launches]
        if ls and min(ls) >= a:
            host += b - a
        elif b - a < KERNEL_WAIT_NS and nxt:
            kern += b - a
        else:
            other += b - a
    in_window = [o for o in ops if w0 <= o["start"] < w1]
    copies = {d: sum(o["bytes"] for o in in_window if o["kind"] == "memcpy" and d in o["name"])
              for d in ("HtoD", "DtoH", "DtoD")}
    return {
        "file": path.split("/")[-1],
        "window_seconds": W / 1e9,
        "compute": length(K) / W, "communication": comm_only / W, "memcpy": copy_only / W,
        "idle": length(gaps) / W, "host_wait": host / W, "kernel_wait": kern / W, "other": other / W,
        "comm_compute_overlap": (length(intersect(C, K)) / length(C)) if C else 0.0,
        "h2d_bytes": copies["HtoD"], "d2h_bytes": copies["DtoH"], "d2d_bytes": copies["DtoD"],
        "kernels_in_window": sum(1 for o in in_window if o["kind"] == "kernel"),
    }


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(json.dumps(figures(p)))
