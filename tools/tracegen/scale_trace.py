#!/usr/bin/env python3
"""Scale a real Kineto trace to a target size for the reader benchmark: the events of the profiled
steps are repeated with timestamps shifted by the window length (correlation and flow ids offset too),
streamed out so the generator itself stays small in memory.
Usage: scale_trace.py IN.json[.gz] OUT.json TARGET_MB
"""
import gzip
import json
import sys


def main():
    src, dst, target_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    opener = gzip.open if open(src, "rb").read(2) == b"\x1f\x8b" else open
    with opener(src, "rb") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + e.get("dur", 0) for e in timed)
    span = (t1 - t0) * 1.01
    max_id = 1 + max([e.get("id", 0) for e in events if isinstance(e.get("id"), int)] +
                     [e.get("args", {}).get("correlation", 0) for e in events])
    target = int(target_mb * 1e6)
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    written = 0
    with open(dst, "w") as out:
        out.write('{"traceEvents": [\n')
        first, rep = True, 0
        while written < target:
            for e in timed:
                c = dict(e)
                c["ts"] = e["ts"] + rep * span
                if isinstance(c.get("id"), int):
                    c["id"] = c["id"] + rep * max_id
                args = c.get("args")
                if isinstance(args, dict) and "correlation" in args:
                    c["args"] = dict(args, correlation=args["correlation"] + rep * max_id)
                if isinstance(c.get("name"), str) and c["name"].startswith("ProfilerStep#"):
                    c["name"] = "ProfilerStep#%d" % (int(c["name"][13:]) + rep * 1000)
                s = ("" if first else ",\n") + json.dumps(c)
                first = False
                out.write(s)
                written += len(s)
            rep += 1
        out.write("\n]")
        for k, v in head.items():
            out.write(",\n" + json.dumps(k) + ": " + json.dumps(v))
        out.write("}\n")
    print(f"{dst}: {written/1e6:.0f} MB, {rep} repetitions of {len(timed)} events")


if __name__ == "__main__":
    main()
