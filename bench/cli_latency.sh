#!/usr/bin/env bash
# Wall-clock latency of `ftbound plan JOB.yaml` (target: < 20 ms), median and p90 over RUNS runs per job.
#   bench/cli_latency.sh [-b path/to/ftbound] [-n RUNS] [JOB.yaml ...]
# Times each run from bash's $EPOCHREALTIME (microseconds, no extra process), so a figure is fork + exec +
# dynamic loading + reading the catalog and job + planning + printing. `ftbound --help` is timed the same
# way as the floor (process start and command registration, no plan). cpu_ms is the child's user + system
# time (bash `time`, 1 ms resolution): on a loaded machine wall time waits for a core, CPU time does not,
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
if (( runs < 30 )); then
    echo "error: -n $runs: use at least 30 runs for a p90" >&2
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

# Runs "$@" $runs times (after 3 warm-up runs) and prints "median_ms p90_ms min_ms max_ms cpu_median_ms".
time_command() {
    local i t0 t1 cpu samples=() cpus=() TIMEFORMAT='%3U %3S'
    for ((i = 0; i < 3; ++i)); do "$@" > /dev/null 2>&1 || return 1; done
    for ((i = 0; i < runs; ++i)); do
        t0=$(now_us)
        cpu=$( { time "$@" > /dev/null 2>&1; } 2>&1 ) || return 1
        t1=$(now_us)
        samples+=($((t1 - t0)))
        cpus+=("$(awk '{ printf "%.0f", ($1 + $2) * 1000 }' <<< "$cpu")")
    done
    local cpu_median
    cpu_median=$(printf '%s\n' "${cpus[@]}" | median)
    printf '%s\n' "${samples[@]}" | sort -n | awk -v cpu="$cpu_median" '{ v[NR] = $1 }
        END {
            med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            p90 = v[int(0.9 * NR + 0.999999)]   # nearest-rank
            printf "%.2f %.2f %.2f %.2f %.0f\n", med / 1000, p90 / 1000, v[1] / 1000, v[NR] / 1000, cpu
        }'
}

echo "ftbound: $bin"
echo "runs per command: $runs (+3 warm-up); load average: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-50s %9s %9s %9s %9s %6s  %s\n' "command" "median_ms" "p90_ms" "min_ms" "max_ms" "cpu_ms" "target (wall p90 < 20 ms)"
status=0
if r=$(time_command "$bin" --help); then
    read -ra fields <<< "$r"
    printf '%-50s %9s %9s %9s %9s %6s  %s\n' "ftbound --help (process floor)" "${fields[@]}" "-"
fi
timed_jobs=()
for job in "${jobs[@]}"; do
    name="plan $(basename "$job")"
    if ! r=$(time_command "$bin" plan "$job"); then
        printf '%-50s failed: %s\n' "$name" "$("$bin" plan "$job" 2>&1 > /dev/null | head -1)"
        status=1
        continue
    fi
    read -ra fields <<< "$r"
    med=${fields[0]} p90=${fields[1]} cpu=${fields[4]}
    timed_jobs+=("$job")
    verdict=$(awk -v m="$med" -v p="$p90" -v c="$cpu" 'BEGIN {
        print (p < 20 ? "ok" : (m < 20 ? "median ok, p90 over" : "missed")) (c < 20 ? "; cpu ok" : "; cpu over") }')
    printf '%-50s %9s %9s %9s %9s %6s  %s\n' "$name" "${fields[@]}" "$verdict"
done

if command -v hyperfine > /dev/null && (( ${#timed_jobs[@]} > 0 )); then
    echo
    echo "hyperfine (same commands, -N, $runs runs):"
    for job in "${timed_jobs[@]}"; do
        hyperfine -N --warmup 3 --runs "$runs" --style basic "$bin plan $job" 2>/dev/null | sed -n '1,3p' || true
    done
fi
exit "$status"
