#!/usr/bin/env python3
"""Eager PyTorch's host time per op, measured in a PyTorch profiler (Kineto) trace.

Prints, for the trace's host threads that launch kernels:
  forward  - the median interval between consecutive cudaLaunchKernel calls on the Python (main) thread,
             intervals under 1 ms (longer ones are waits: syncs, data loading);
  backward - on the autograd engine's thread, the median of (top-level node duration / kernels it launched) over
             the nodes other than AccumulateGrad that launch at least one kernel;
  accumulate_grad - the median duration of the engine's AccumulateGrad nodes.
With --check HEADER it compares them with the constants in src/timing/eager_host.hpp (to the microsecond) and exits
1 when one differs: the constants are these measurements, not fitted values.
"""
import argparse
import bisect
import collections
import gzip
import json
import re
import sys


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def threads(path):
    with gzip.open(path) as f:
        doc = json.load(f)
    by_thread = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "cuda_runtime"):
            by_thread[(e["pid"], e["tid"])].append(e)
    for events in by_thread.values():
        events.sort(key=lambda e: (e["ts"], -e["dur"]))
    return by_thread


def top_level_ops(events):
    top, end = [], -1
    for e in events:
        if e["cat"] == "cpu_op" and e["ts"] >= end:
            top.append(e)
            end = e["ts"] + e["dur"]
    return top


def measure(path):
    """The autograd engine's thread is the one with the most top-level autograd nodes; the Python thread is the
    other thread that launches the most kernels."""
    candidates = []
    for events in threads(path).values():
        launches = [e["ts"] for e in events if e["cat"] == "cuda_runtime" and e["name"].startswith("cudaLaunchKernel")]
        if launches:
            top = top_level_ops(events)
            autograd = [e for e in top if e["name"].startswith("autograd::engine::evaluate_function")]
            candidates.append((launches, autograd))
    candidates.sort(key=lambda c: len(c[1]))
    launches, autograd = candidates[-1]
    per_kernel = []
    for e in autograd:
        kernels = bisect.bisect_left(launches, e["ts"] + e["dur"]) - bisect.bisect_left(launches, e["ts"])
        if kernels >= 1 and "AccumulateGrad" not in e["name"]:
            per_kernel.append(e["dur"] / kernels)
    python_launches = max((c[0] for c in candidates[:-1]), key=len)
    gaps = [b - a for a, b in zip(python_launches, python_launches[1:]) if b - a < 1000]
    return {"forward": median(gaps), "backward": median(per_kernel),
            "accumulate_grad": median([e["dur"] for e in autograd if "AccumulateGrad" in e["name"]])}


def header_constants(header):
    text = open(header).read()
    names = {"forward": "kEagerForwardKernelSeconds", "backward": "kEagerBackwardKernelSeconds",
             "accumulate_grad": "kAccumulateGradSeconds"}
    out = {}
    for key, name in names.items():
        m = re.search(name + r"\s*=\s*([0-9.eE+-]+)", text)
        out[key] = float(m.group(1)) * 1e6 if m else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a Kineto trace (.json.gz)")
    ap.add_argument("--check", metavar="HEADER", help="src/timing/eager_host.hpp to compare with")
    args = ap.parse_args()
    measured = measure(args.trace)
    for key, us in measured.items():
        print(f"{key}: {us} us")
    if not args.check:
        return 0
    ok = True
    for key, us in header_constants(args.check).items():
        if us is None or measured[key] is None or abs(us - measured[key]) > 0.5:
            print(f"error: {args.check}: {key}: constant {us} us, trace {measured[key]} us", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
