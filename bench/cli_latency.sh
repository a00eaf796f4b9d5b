#!/usr/bin/env bash
# Wall-clock latency of `ftbound plan JOB.yaml` (target: median <= 10 ms, issue #30), median and p90 over RUNS runs per job.
#   bench/cli_latency.sh [-b path/to/ftbound] [-n RUNS] [JOB.yaml ...]
# Each sample is one process timed by bench/spawn_latency (posix_spawn to wait4, built beside ftbound in
# build/bench/): exec + dynamic loading + reading the catalog and job + planning + printing, and no shell.
# `ftbound --version` is timed the same way as the floor (process start and command registration, no plan),
# round-robin with the plans; x_floor is a plan's median over the floor's. cpu_ms is the child's user + system time
# (wait4's rusage): on a loaded machine wall time waits for a core, CPU time does not, so cpu_ms is what the
# command would take on an idle core. When hyperfine is installed its summary of the same command follows.
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
# The timer beside the binary timed, else the default build's (when timing a copy kept elsewhere).
timer="$(dirname "$bin")/bench/spawn_latency"
[[ -x "$timer" ]] || timer="$here/build/bench/spawn_latency"
if [[ ! -x "$timer" ]]; then
    echo "error: no bench/spawn_latency beside $bin or in $here/build (build it: cmake --build build --target spawn_latency)" >&2
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

# Median of the numbers on stdin, one a line.
median() {
    sort -n | awk '{ v[NR] = $1 } END { printf "%.2f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# "median_ms p90_ms min_ms max_ms cpu_median_ms" of one command's samples.
summarize() {
    local cpu_median
    cpu_median=$(median < "$2" | awk '{ printf "%.1f", $1 / 1000 }')
    sort -n "$1" | awk -v cpu="$cpu_median" '{ v[NR] = $1 }
        END {
            med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            p90 = v[int(0.9 * NR + 0.999999)]   # nearest-rank
            printf "%.2f %.2f %.2f %.2f %.1f\n", med / 1000, p90 / 1000, v[1] / 1000, v[NR] / 1000, cpu
        }'
}

# Command 0 is the floor, then one plan per job. Runs go round-robin (floor, job 1, job 2, ..., floor, ...) so that
# every command meets the same load, and the ratios to the floor compare like with like on a shared machine.
names=("ftbound --version (process floor)")
for job in "${jobs[@]}"; do names+=("plan $(basename "$job")"); done
# Command k's argv, one word a line.
command_words() {
    if (( $1 == 0 )); then printf '%s\n' "$bin" --version; else printf '%s\n' "$bin" plan "${jobs[$1 - 1]}"; fi
}
samples=$(mktemp -d)
trap 'rm -rf "$samples"' EXIT
# A command that fails once is reported, not timed; the others run round-robin in one spawn_latency call, and
# sample file K of that call belongs to the K-th timed command.
failed=()
timer_args=()
timed=()
for k in "${!names[@]}"; do
    mapfile -t words < <(command_words "$k")
    if "${words[@]}" > /dev/null 2>&1; then
        failed[k]=0
        (( ${#timed[@]} == 0 )) || timer_args+=(":::")
        timer_args+=("${words[@]}")
        timed+=("$k")
    else
        failed[k]=1
    fi
done
(( ${#timed[@]} == 0 )) || "$timer" "$runs" "$samples" -- "${timer_args[@]}"
for i in "${!timed[@]}"; do
    mv "$samples/wall.$i" "$samples/wall.k${timed[i]}"
    mv "$samples/cpu.$i" "$samples/cpu.k${timed[i]}"
done

echo "ftbound: $bin"
echo "runs per command: $runs (+3 warm-up), round-robin, timed by $timer; load average after: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-50s %9s %9s %9s %9s %6s %7s  %s\n' "command" "median_ms" "p90_ms" "min_ms" "max_ms" "cpu_ms" "x_floor" "target (wall median <= 10 ms)"
status=0
floor=""
timed_jobs=()
for k in "${!names[@]}"; do
    if (( failed[k] )); then
        mapfile -t words < <(command_words "$k")
        printf '%-50s failed: %s\n' "${names[k]}" "$("${words[@]}" 2>&1 > /dev/null | head -1)"
        status=1
        continue
    fi
    read -ra fields <<< "$(summarize "$samples/wall.k$k" "$samples/cpu.k$k")"
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
