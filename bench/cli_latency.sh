#!/usr/bin/env bash
# Wall-clock latency of `ftbound plan JOB.yaml` (target: median <= 10 ms, issue #30), median and p90 over RUNS runs per job.
#   bench/cli_latency.sh [-b path/to/ftbound] [-n RUNS] [JOB.yaml ...]
# Times each run from bash's $EPOCHREALTIME (microseconds, no extra process), so a figure is fork + exec +
# dynamic loading + reading the catalog and job + planning + printing. `ftbound --version` is timed the same
# way as the floor (process start and command registration, no plan), round-robin with the plans; x_floor is a
# plan's median over the floor's, the figure README quotes. cpu_ms is the child's user + system time (bash `time`,
# 1 ms resolution): on a loaded machine wall time waits for a core, CPU time does not,
# so cpu_ms is what the command would take on an idle core. When hyperfine is installed its summary of the
# same command follows (hyperfine -N: no shell in between).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$here/build/ftbound"
runs=50
while getopts "b:n:" opt; do
    case "$opt" in
        b) bin="$OPTARG" ;;
        n) runs="$OPTARG" ;;
        *) echo "usage: $0 [-b ftbound] [-n runs] [JOB.yaml ...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ ! -x "$bin" ]]; then
    echo "error: $bin is not an executable (build it, or pass -b)" >&2
    exit 2
fi
if (( runs < 15 )); then
    echo "error: -n $runs: use at least 15 runs for a p90" >&2
    exit 2
fi
jobs=("$@")
if (( ${#jobs[@]} == 0 )); then
    jobs=("$here"/examples/*.yaml
          "$here/validation/jobs/lf-h100-mpt70b-s2048-g512-mb8.yaml"
          "$here/validation/jobs/lg-a100-40-llama2-7b-lora-mb1-g1.yaml"
          "$here/validation/jobs/llama3-h100-405b-g16384-cp16-s131072.yaml")
fi

# Microseconds since the epoch from $EPOCHREALTIME ("seconds.micros"), as an integer.
now_us() { local t="${EPOCHREALTIME/[.,]/}"; echo "$((10#$t))"; }

# Median of the numbers on stdin, one a line.
median() {
    sort -n | awk '{ v[NR] = $1 } END { printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One timed run of "$@": appends its wall microseconds to $1 and its CPU milliseconds (user + system) to $2.
time_once() {
    local wall_file="$1" cpu_file="$2" t0 t1 cpu TIMEFORMAT='%3U %3S'
    shift 2
    t0=$(now_us)
    cpu=$( { time "$@" > /dev/null 2>&1; } 2>&1 ) || return 1
    t1=$(now_us)
    echo $((t1 - t0)) >> "$wall_file"
    awk '{ printf "%.0f\n", ($1 + $2) * 1000 }' <<< "$cpu" >> "$cpu_file"
}

# "median_ms p90_ms min_ms max_ms cpu_median_ms" of one command's samples.
summarize() {
    local cpu_median
    cpu_median=$(median < "$2")
    sort -n "$1" | awk -v cpu="$cpu_median" '{ v[NR] = $1 }
        END {
            med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            p90 = v[int(0.9 * NR + 0.999999)]   # nearest-rank
            printf "%.2f %.2f %.2f %.2f %.0f\n", med / 1000, p90 / 1000, v[1] / 1000, v[NR] / 1000, cpu
        }'
}

# Command 0 is the floor, then one plan per job. Runs go round-robin (floor, job 1, job 2, ..., floor, ...) so that
# every command meets the same load, and the ratios to the floor compare like with like on a shared machine.
names=("ftbound --version (process floor)")
for job in "${jobs[@]}"; do names+=("plan $(basename "$job")"); done
# Runs command k.
run_command() {
    if (( $1 == 0 )); then "$bin" --version; else "$bin" plan "${jobs[$1 - 1]}"; fi
}
samples=$(mktemp -d)
trap 'rm -rf "$samples"' EXIT
failed=()
for k in "${!names[@]}"; do
    failed[k]=0
    for ((i = 0; i < 3; ++i)); do run_command "$k" > /dev/null 2>&1 || failed[k]=1; done   # warm-up, and a check
done
for ((i = 0; i < runs; ++i)); do
    for k in "${!names[@]}"; do
        (( failed[k] )) || time_once "$samples/wall.$k" "$samples/cpu.$k" run_command "$k" || failed[k]=1
    done
done

echo "ftbound: $bin"
echo "runs per command: $runs (+3 warm-up), round-robin; load average after: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-50s %9s %9s %9s %9s %6s %7s  %s\n' "command" "median_ms" "p90_ms" "min_ms" "max_ms" "cpu_ms" "x_floor" "target (wall median <= 10 ms)"
status=0
floor=""
timed_jobs=()
for k in "${!names[@]}"; do
    if (( failed[k] )); then
        printf '%-50s failed: %s\n' "${names[k]}" "$(run_command "$k" 2>&1 > /dev/null | head -1)"
        status=1
        continue
    fi
    read -ra fields <<< "$(summarize "$samples/wall.$k" "$samples/cpu.$k")"
    if (( k == 0 )); then
        floor=${fields[0]}
        printf '%-50s %9s %9s %9s %9s %6s %7s  %s\n' "${names[k]}" "${fields[@]}" "1.00" "-"
        continue
    fi
    med=${fields[0]} p90=${fields[1]} cpu=${fields[4]}
    timed_jobs+=("${jobs[k - 1]}")
    ratio=$(awk -v m="$med" -v f="$floor" 'BEGIN { if (f > 0) printf "%.2f", m / f; else print "-" }')
    verdict=$(awk -v m="$med" -v p="$p90" -v c="$cpu" 'BEGIN {
        print (m <= 10 ? (p <= 10 ? "ok" : "median ok, p90 over") : "missed") (c <= 10 ? "; cpu ok" : "; cpu over") }')
    printf '%-50s %9s %9s %9s %9s %6s %7s  %s\n' "${names[k]}" "${fields[@]}" "$ratio" "$verdict"
done

if command -v hyperfine > /dev/null && (( ${#timed_jobs[@]} > 0 )); then
    echo
    echo "hyperfine (same commands, -N, $runs runs):"
    for job in "${timed_jobs[@]}"; do
        hyperfine -N --warmup 3 --runs "$runs" --style basic "$bin plan $job" 2>/dev/null | sed -n '1,3p' || true
    done
fi
exit "$status"
