// Planner throughput, in process, one thread (= per core). Targets (issues): >= 100,000 memory plans/s,
// >= 20,000 complete plans/s (memory + time + attribution), >= 2,000 plans/s with weak points.
// Each benchmark reports `plans_per_second` and `x_target` (plans/s divided by the target; >= 1 meets it).
//   plan_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N] [--benchmark_report_aggregates_only=true]
// Jobs are loaded with ftb::load_job before any timing; a job that fails to load is reported and skipped.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/plan.hpp"
#include "ftbound/timing.hpp"
#include "memory/host_heap.hpp"
#include "report/plan_report.hpp"
#include "spec/job_file.hpp"

namespace {

constexpr double kTargetMemoryPlansPerSecond = 100000;   // issue target: memory plan only
constexpr double kTargetCompletePlansPerSecond = 20000;  // issue target: memory + time + attribution
constexpr double kTargetWeakPointPlansPerSecond = 2000;  // issue target: complete plan + weak points

// Short name -> job file relative to the source tree.
struct JobFile {
    const char* name;
    const char* path;
};
constexpr JobFile kJobFiles[] = {
    {"ex-70b-full-8xh100", "examples/llama3.1-70b-full-8xh100-unsharded.yaml"},
    {"ex-8b-lora-r760xa", "examples/llama3.1-8b-lora-r760xa.yaml"},
    {"ex-8b-lora-rtx4090", "examples/llama3.1-8b-lora-rtx4090.yaml"},
    {"val-mpt70b-512gpu-zero3", "validation/jobs/lf-h100-mpt70b-s2048-g512-mb8.yaml"},
    {"val-llama2-7b-lora-a100", "validation/jobs/lg-a100-40-llama2-7b-lora-mb1-g1.yaml"},
    {"val-llama3-405b-16k-gpu", "validation/jobs/llama3-h100-405b-g16384-cp16-s131072.yaml"},
    {"cpu-0.9b-full", "validation/measured/cpu-vm/jobs/cpu-0.9b-full-fp32-b1-s128-t2.yaml"},
};
// CPU jobs: their plans replay the step's heap (memory/host_heap.hpp), memoised per shape for the process; the
// *Cold benchmarks empty the memo before each plan, so they time what one `ftbound plan` pays.
constexpr const char* kCpuJob = "cpu-0.9b-full";
// The search sweeps this job (dp > 1 so every ZeRO stage is a real choice).
constexpr const char* kSearchJob = "val-mpt70b-512gpu-zero3";

void set_rates(benchmark::State& state, double target_per_second) {
    const double plans = double(state.iterations());
    state.counters["plans_per_second"] = benchmark::Counter(plans, benchmark::Counter::kIsRate);
    state.counters["x_target"] = benchmark::Counter(plans / target_per_second, benchmark::Counter::kIsRate);
}

void bm_plan_memory(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        ftb::MemoryResult m = ftb::plan_memory(*job);
        benchmark::DoNotOptimize(m);
    }
    set_rates(state, kTargetMemoryPlansPerSecond);
}

void bm_plan_memory_cold(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        ftb::forget_cpu_heap_replays();
        ftb::MemoryResult m = ftb::plan_memory(*job);
        benchmark::DoNotOptimize(m);
    }
    set_rates(state, kTargetMemoryPlansPerSecond);
}

void bm_plan_complete(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        const ftb::MemoryResult m = ftb::plan_memory(*job);
        ftb::TimeResult t = ftb::plan_time(*job, m);
        benchmark::DoNotOptimize(t);
    }
    set_rates(state, kTargetCompletePlansPerSecond);
}

void bm_plan_with_weak_points(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        const ftb::MemoryResult m = ftb::plan_memory(*job);
        const ftb::TimeResult t = ftb::plan_time(*job, m);
        std::vector<ftb::WeakPoint> w = ftb::weak_points(*job, m, t);
        benchmark::DoNotOptimize(w);
    }
    set_rates(state, kTargetWeakPointPlansPerSecond);
}

// weak_points alone, on a precomputed plan: separates its cost from the plan's.
void bm_weak_points_only(benchmark::State& state, const ftb::Job* job) {
    const ftb::MemoryResult m = ftb::plan_memory(*job);
    const ftb::TimeResult t = ftb::plan_time(*job, m);
    for (auto _ : state) {
        std::vector<ftb::WeakPoint> w = ftb::weak_points(*job, m, t);
        benchmark::DoNotOptimize(w);
    }
    set_rates(state, kTargetWeakPointPlansPerSecond);
}

// What `ftbound plan` computes (limits bisection, fit advice, weak points); no target, for the CLI budget.
void bm_make_plan(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        ftb::Plan p = ftb::make_plan(*job);
        benchmark::DoNotOptimize(p);
    }
    state.counters["plans_per_second"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

// make_plan with no replay memoised: on a CPU job the limits' bisection replays about 30 heap shapes.
void bm_make_plan_cold(benchmark::State& state, const ftb::Job* job) {
    for (auto _ : state) {
        ftb::forget_cpu_heap_replays();
        ftb::Plan p = ftb::make_plan(*job);
        benchmark::DoNotOptimize(p);
    }
    state.counters["plans_per_second"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

// The parts of `ftbound plan` besides make_plan, for the CLI's 20 ms budget: reading the job file and the
// catalog entries it names, and formatting the report. The catalog keeps every document it parsed for the
// life of the process, so after the first iteration LoadJob times the job file plus cached catalog entries;
// the cold path (first parse of each catalog file) is what bench/cli_latency.sh measures.
void bm_load_job(benchmark::State& state, std::string path) {
    for (auto _ : state) {
        try {
            ftb::Job job = ftb::load_job(path);
            benchmark::DoNotOptimize(job);
        } catch (const std::exception& e) {  // the catalog changed under a running benchmark
            state.SkipWithError(e.what());
            break;
        }
    }
    state.counters["loads_per_second"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void bm_plan_text(benchmark::State& state, const ftb::Job* job) {
    const ftb::Plan plan = ftb::make_plan(*job);
    for (auto _ : state) {
        std::string text = ftb::plan_text(*job, plan);
        benchmark::DoNotOptimize(text);
    }
}

void bm_plan_json(benchmark::State& state, const ftb::Job* job) {
    const ftb::Plan plan = ftb::make_plan(*job);
    for (auto _ : state) {
        std::string text = ftb::plan_json(*job, plan).dump(2);
        benchmark::DoNotOptimize(text);
    }
}

constexpr ftb::Recompute kRecomputeChoices[] = {ftb::Recompute::none, ftb::Recompute::selective,
                                                ftb::Recompute::full};

// A configuration search: micro_batch 1..16 x zero 0..3 x recompute {none, selective, full} = 192
// configurations, each re-checked (check_job, as the fit advisor does) then planned (memory + time).
// global_batch becomes the smallest multiple of micro_batch*dp at or above the job's, so every micro-batch
// is a valid job. Items = configurations evaluated; `rejected_per_sweep` counts those check_job refused.
void bm_search(benchmark::State& state, const ftb::Job* base) {
    ftb::Job trial = *base;
    const int64_t base_global_batch = base->spec.train.global_batch;
    const int64_t dp = base->spec.parallel.dp;
    int64_t configs = 0, rejected = 0, fitting = 0;
    for (auto _ : state) {
        rejected = fitting = 0;
        for (int64_t mb = 1; mb <= 16; ++mb) {
            for (int zero = 0; zero <= 3; ++zero) {
                for (ftb::Recompute rc : kRecomputeChoices) {
                    trial.spec.train.micro_batch = mb;
                    trial.spec.train.global_batch = (base_global_batch + mb * dp - 1) / (mb * dp) * (mb * dp);
                    trial.spec.parallel.zero = zero;
                    trial.spec.train.recompute = rc;
                    ++configs;
                    try {
                        ftb::check_job(trial);
                    } catch (const ftb::InputError&) {
                        ++rejected;
                        continue;
                    }
                    const ftb::MemoryResult m = ftb::plan_memory(trial);
                    ftb::TimeResult t = ftb::plan_time(trial, m);
                    benchmark::DoNotOptimize(t);
                    fitting += m.fits ? 1 : 0;
                }
            }
        }
    }
    state.SetItemsProcessed(configs);
    state.counters["configs_per_second"] = benchmark::Counter(double(configs), benchmark::Counter::kIsRate);
    state.counters["rejected_per_sweep"] = double(rejected);
    state.counters["fitting_per_sweep"] = double(fitting);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    // Loaded once, before any timing; the vector is sized up front so the pointers stay valid.
    std::vector<ftb::Job> jobs;
    std::vector<std::string> names, paths;
    jobs.reserve(std::size(kJobFiles));
    int failed = 0;
    for (const JobFile& f : kJobFiles) {
        try {
            const std::string path = std::string(FTBOUND_SOURCE_DIR) + "/" + f.path;
            jobs.push_back(ftb::load_job(path));
            names.emplace_back(f.name);
            paths.push_back(path);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "plan_bench: skipping %s: %s\n", f.path, e.what());
            ++failed;
        }
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
        const ftb::Job* job = &jobs[i];
        benchmark::RegisterBenchmark(("PlanMemory/" + names[i]).c_str(), bm_plan_memory, job);
        benchmark::RegisterBenchmark(("PlanComplete/" + names[i]).c_str(), bm_plan_complete, job);
        benchmark::RegisterBenchmark(("PlanWithWeakPoints/" + names[i]).c_str(), bm_plan_with_weak_points, job);
        benchmark::RegisterBenchmark(("WeakPointsOnly/" + names[i]).c_str(), bm_weak_points_only, job);
        benchmark::RegisterBenchmark(("MakePlan/" + names[i]).c_str(), bm_make_plan, job);
        benchmark::RegisterBenchmark(("LoadJobWarmCatalog/" + names[i]).c_str(), bm_load_job, paths[i]);
        benchmark::RegisterBenchmark(("PlanText/" + names[i]).c_str(), bm_plan_text, job);
        benchmark::RegisterBenchmark(("PlanJson/" + names[i]).c_str(), bm_plan_json, job);
        if (names[i] == kCpuJob) {
            benchmark::RegisterBenchmark(("MakePlanCold/" + names[i]).c_str(), bm_make_plan_cold, job);
            benchmark::RegisterBenchmark(("PlanMemoryCold/" + names[i]).c_str(), bm_plan_memory_cold, job);
        }
        if (names[i] == kSearchJob)
            benchmark::RegisterBenchmark(("Search192/" + names[i]).c_str(), bm_search, job);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return failed > 0 ? 1 : 0;
}
