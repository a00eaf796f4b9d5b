#!/usr/bin/env bash
# One run, one file: Python's json.load against `ftbound diagnose` and the reader alone (trace_read_bench).
#   bench/trace_vs_python.sh TRACE.json [BUILD_DIR] [BASELINE_FTBOUND]
# With BASELINE_FTBOUND (an older build of ftbound), that one's diagnose is timed in the same run too.
# Make the issue-#30 input (413 MB) with:
#   python3 tools/tracegen/scale_trace.py tests/data/traces/hta_negative_queue_rank0.json.gz /tmp/trace400.json 400
# Every timing is taken back to back in this one script so that the figures share the machine's load (printed
# before and after). The file is read once first so each timed reader finds it in the page cache.
# Python: json.load(open(FILE)) = read + UTF-8 decode + parse into objects, the way a Python tool reads a trace;
# its parse-only json.loads (bytes already in memory) is printed too. CPU seconds are user + system of the
# process (on a shared machine the wall clock also holds time spent waiting for a core).
set -euo pipefail

trace="${1:?usage: $0 TRACE.json [BUILD_DIR]}"
build="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"
baseline="${3:-}"
for bin in "$build/ftbound" "$build/bench/trace_read_bench"; do
    [[ -x "$bin" ]] || { echo "error: $bin is not an executable (build ftbound and trace_read_bench)" >&2; exit 2; }
done
mb=$(python3 -c "import os,sys; print(f'{os.path.getsize(sys.argv[1])/1e6:.1f}')" "$trace")
cat "$trace" > /dev/null
echo "file: $trace ($mb MB); $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

py_out=$(python3 - "$trace" <<'EOF'
import json, os, resource, sys, time
path = sys.argv[1]
mb = os.path.getsize(path) / 1e6
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
w0, c0 = time.perf_counter(), cpu()
with open(path) as f:
    doc = json.load(f)
w1, c1 = time.perf_counter(), cpu()
del doc
with open(path, "rb") as f:
    raw = f.read()
w2, c2 = time.perf_counter(), cpu()
doc = json.loads(raw)
w3, c3 = time.perf_counter(), cpu()
print(f"python json.load: wall {w1-w0:.2f} s, cpu {c1-c0:.2f} s = {mb/(c1-c0):.1f} MB/s per core")
print(f"python json.loads (bytes in memory): wall {w3-w2:.2f} s, cpu {c3-c2:.2f} s")
print(f"{c1-c0:.4f} {w1-w0:.4f}")
EOF
)
echo "$py_out" | sed '$d'
read -r py_cpu py_wall <<< "$(echo "$py_out" | tail -n 1)"

# time_diagnose LABEL BINARY: five runs; the one of median CPU time gives wall, CPU, peak RSS, MB per CPU-second
# and the ratios to json.load (a loaded machine moves a single run by about 10%).
time_diagnose() {
    local tf runs=() d_wall d_user d_sys d_rss_kb
    tf=$(mktemp)
    for _ in 1 2 3 4 5; do
        /usr/bin/time -f "%e %U %S %M" -o "$tf" "$2" diagnose "$trace" > /dev/null
        read -r d_wall d_user d_sys d_rss_kb < "$tf"
        runs+=("$(python3 -c "import sys; print(f'{float(sys.argv[1]) + float(sys.argv[2]):.2f}')" "$d_user" "$d_sys") $d_wall $d_user $d_sys $d_rss_kb")
    done
    rm -f "$tf"
    echo "$1 diagnose, CPU s of the five runs: $(printf '%s\n' "${runs[@]}" | cut -d' ' -f1 | tr '\n' ' ')"
    read -r _ d_wall d_user d_sys d_rss_kb <<< "$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p)"
    echo "$1 diagnose (median run): wall ${d_wall} s, user ${d_user} s, sys ${d_sys} s, peak RSS $((d_rss_kb / 1024)) MiB"
    python3 -c "
import sys
label, mb, py_cpu, py_wall, wall, user, sys_s = sys.argv[1], *map(float, sys.argv[2:])
cpu = user + sys_s
print(f'{label} diagnose: {mb/cpu:.0f} MB/s per core (MB / CPU s); json.load / diagnose = {py_cpu/cpu:.1f}x in CPU '
      f'time, {py_wall/wall:.1f}x in wall time')" "$1" "$mb" "$py_cpu" "$py_wall" "$d_wall" "$d_user" "$d_sys"
}
[[ -n "$baseline" ]] && time_diagnose baseline "$baseline"
time_diagnose ftbound "$build/ftbound"
"$build/bench/trace_read_bench" "$trace"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
