// `ftbound search` in process, wall clock, against the planner's own cost per plan on the same job.
// Targets (issue 12): Llama 3.1 405B on up to 16,384 H100 (1-2048 DGX H100 nodes), the whole space in under
// 10 s on a 2-core machine; Llama 3.1 8B LoRA on every catalog server at 1-8 nodes in under 1 s.
//   search_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
// Counters: configurations planned (memory walk) and timed (step schedule) per search; `cpu_s`: CPU seconds
// of all threads per search (getrusage), which a shared, loaded machine inflates far less than wall time;
// `x_complete_plans`: the search's CPU time in units of one complete plan's (memory + time) CPU time on the same
// job, and `x_memory_plans` the same in memory plans. Threads: FTB_SEARCH_THREADS (default: all cores).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "memory/host_heap.hpp"
#include "search/search.hpp"
#include "spec/catalog.hpp"
#include "spec/framework_support.hpp"
#include "spec/job_file.hpp"

namespace {

struct Case {
    ftb::Job job;
    ftb::SearchRequest request;
    bool forget_memo = false;   // empty the CPU heap replays' memo before each search
};

unsigned threads() {
    if (const char* t = std::getenv("FTB_SEARCH_THREADS")) return unsigned(std::max(1, std::atoi(t)));
    return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<int> node_range(int a, int b) {
    std::vector<int> v;
    for (int n = a; n <= b; ++n) v.push_back(n);
    return v;
}

// Llama 3.1 405B as Meta trained it (validation/jobs: 8K sequences, global batch 2048), searched on 1-2048 DGX H100.
Case llama405b() {
    Case c{ftb::load_job(std::string(FTBOUND_SOURCE_DIR) + "/validation/jobs/llama3-h100-405b-g16384-cp1-s8192.yaml"), {}};
    c.request.systems = {{"dgx-h100", ftb::Catalog::instance().system("dgx-h100", {"bench", "system"}), false}};
    c.request.nodes = node_range(1, 2048);
    c.request.support = ftb::load_framework_support(c.job.spec.train.framework);
    c.request.threads = threads();
    return c;
}

// The README's Llama 3.1 8B LoRA example on every catalog server, 1-8 nodes.
Case llama8b_lora_all_systems() {
    Case c{ftb::load_job(std::string(FTBOUND_SOURCE_DIR) + "/examples/llama3.1-8b-lora-r760xa.yaml"), {}};
    const ftb::Catalog& cat = ftb::Catalog::instance();
    for (const std::string& n : cat.names("systems"))
        c.request.systems.push_back({n, cat.system(n, {"bench", "systems"}), n == c.job.system.name});
    c.request.nodes = node_range(1, 8);
    c.request.support = ftb::load_framework_support(c.job.spec.train.framework);
    c.request.threads = threads();
    return c;
}

// A CPU-server search: the 0.9B CPU validation job on the Dell PowerEdge R760 (2x Xeon 8480, a data-parallel
// rank per socket), 1-8 nodes. Each configuration's plan replays the step's heap (memory/host_heap.hpp); the memo
// is emptied before each search so every iteration pays what one `ftbound search` does.
Case cpu_server() {
    Case c{ftb::load_job(std::string(FTBOUND_SOURCE_DIR) +
                         "/validation/measured/cpu-vm/jobs/cpu-0.9b-full-fp32-b1-s128-t2.yaml"),
           {}};
    c.job.spec.train.global_batch = 16;   // a multiple of micro_batch x dp for the searched layouts
    const std::string name = "dell-poweredge-r760-2x-xeon-8480";
    c.request.systems = {{name, ftb::Catalog::instance().system(name, {"bench", "system"}), false}};
    c.request.nodes = node_range(1, 8);
    c.request.support = ftb::load_framework_support(c.job.spec.train.framework);
    c.request.threads = threads();
    c.forget_memo = true;
    return c;
}

double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// CPU seconds of one plan of the job (one thread, at least 0.5 CPU seconds of plans).
template <typename Plan>
double cpu_seconds_per(Plan plan) {
    const double start = process_cpu_seconds();
    int n = 0;
    do {
        plan();
        ++n;
    } while (process_cpu_seconds() - start < 0.5);
    return (process_cpu_seconds() - start) / n;
}

void bm_search(benchmark::State& state, const Case* c) {
    const double per_plan = cpu_seconds_per([&] {
        const ftb::MemoryResult m = ftb::plan_memory(c->job);
        ftb::TimeResult t = ftb::plan_time(c->job, m);
        benchmark::DoNotOptimize(t);
    });
    const double per_memory_plan = cpu_seconds_per([&] {
        ftb::MemoryResult m = ftb::plan_memory(c->job);
        benchmark::DoNotOptimize(m);
    });
    ftb::SearchResult r;
    double cpu = 0;
    for (auto _ : state) {
        if (c->forget_memo) ftb::forget_cpu_heap_replays();
        const double start = process_cpu_seconds();
        r = ftb::run_search(c->job, c->request);
        cpu += process_cpu_seconds() - start;
        benchmark::DoNotOptimize(r);
    }
    const double per_search = cpu / double(state.iterations());
    state.counters["evaluated"] = double(r.evaluated);
    state.counters["timed"] = double(r.timed);
    state.counters["feasible"] = double(r.feasible);
    state.counters["meshes"] = double(r.meshes);
    state.counters["threads"] = double(c->request.threads);
    state.counters["cpu_s"] = per_search;
    state.counters["configs_per_cpu_s"] = double(r.evaluated) / per_search;
    state.counters["complete_plan_us"] = per_plan * 1e6;
    state.counters["memory_plan_us"] = per_memory_plan * 1e6;
    state.counters["x_complete_plans"] = per_search / per_plan;
    state.counters["x_memory_plans"] = per_search / per_memory_plan;
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    std::vector<std::pair<std::string, Case>> cases;
    try {
        cases.emplace_back("Search/llama3.1-405b-full-1-2048xdgx-h100", llama405b());
        cases.emplace_back("Search/llama3.1-8b-lora-all-systems-1-8-nodes", llama8b_lora_all_systems());
        cases.emplace_back("Search/cpu-0.9b-full-r760-1-8-nodes", cpu_server());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "search_bench: %s\n", e.what());
        return 1;
    }
    for (const auto& [name, c] : cases)
        benchmark::RegisterBenchmark(name.c_str(), bm_search, &c)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
