// Cost of the hot-path calls the step-time search makes hundreds of times per plan
// (target: >= 20,000 plans/s/core, so each call well under 100 ns).
#include <benchmark/benchmark.h>

#include "system/collectives.hpp"
#include "system/topology.hpp"
#include "timing/rates.hpp"

namespace {

ftb::DeviceSpec h100() {
    ftb::DeviceSpec d;
    d.name = "h100-sxm";
    d.vendor = "nvidia";
    d.sm_count = 132;
    d.memory_bandwidth_GBps = 3350;
    d.peak_tflops = {66.9, 494.7, 989.4, 989.4, 1978.9};
    return d;
}

ftb::SystemSpec hgx(int nodes) {
    ftb::DeviceSpec cpu;
    cpu.name = "xeon-8480";
    cpu.kind = ftb::DeviceKind::cpu;
    cpu.vendor = "intel";
    ftb::SystemSpec s = ftb::compose_system(h100(), 8, {"nvlink4", 450, 1, 0.824}, {"pcie5", 64, 1, 0.89}, cpu, 2,
                                            {"upi-2.0", 64, 0.1, 0.8});
    s.inter_node = {"ib-ndr-400", 50, 2, 0.95};
    s.nodes = nodes;
    return s;
}

// Shapes of one Llama-3-8B layer at micro-batch 4 x 4096 tokens (q, kv, o, gate/up, down, LoRA A/B).
constexpr int64_t kShapes[][3] = {{16384, 4096, 4096}, {16384, 1024, 4096}, {16384, 4096, 4096},
                                  {16384, 14336, 4096}, {16384, 4096, 14336}, {16384, 16, 4096},
                                  {16384, 4096, 16}, {4096, 4096, 16384}};
constexpr int kShapeCount = sizeof(kShapes) / sizeof(kShapes[0]);

void BM_GemmSeconds_DeviceRates(benchmark::State& state) {
    const ftb::DeviceRates rates = ftb::device_rates(h100());
    int i = 0;
    for (auto _ : state) {
        const auto& s = kShapes[i++ % kShapeCount];
        benchmark::DoNotOptimize(ftb::gemm_seconds(s[0], s[1], s[2], ftb::Dtype::bf16, rates));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GemmSeconds_DeviceRates);

void BM_GemmSeconds_DeviceSpec(benchmark::State& state) {
    const ftb::DeviceSpec dev = h100();
    int i = 0;
    for (auto _ : state) {
        const auto& s = kShapes[i++ % kShapeCount];
        benchmark::DoNotOptimize(ftb::gemm_seconds(s[0], s[1], s[2], ftb::Dtype::bf16, dev));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GemmSeconds_DeviceSpec);

void BM_MemoryBoundSeconds(benchmark::State& state) {
    const ftb::DeviceRates rates = ftb::device_rates(h100());
    double bytes = 1e6;
    for (auto _ : state) {
        benchmark::DoNotOptimize(ftb::memory_bound_seconds(bytes, rates));
        bytes += 1;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemoryBoundSeconds);

void collective_bench(benchmark::State& state, int ranks, int per_node, ftb::Collective op) {
    const ftb::CommGroup group = ftb::comm_group(hgx((ranks + per_node - 1) / per_node), ranks, per_node);
    double bytes = 64.0 * 1024 * 1024;
    for (auto _ : state) {
        benchmark::DoNotOptimize(ftb::collective_seconds(op, bytes, group));
        bytes = bytes < 4e9 ? bytes * 1.37 : 4096;  // sweep sizes: every protocol and algorithm wins somewhere
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_CollectiveSeconds_AllReduce8(benchmark::State& s) { collective_bench(s, 8, 8, ftb::Collective::all_reduce); }
void BM_CollectiveSeconds_AllReduce64(benchmark::State& s) { collective_bench(s, 64, 8, ftb::Collective::all_reduce); }
void BM_CollectiveSeconds_AllGather64(benchmark::State& s) { collective_bench(s, 64, 8, ftb::Collective::all_gather); }
void BM_CollectiveSeconds_AllToAll16(benchmark::State& s) { collective_bench(s, 16, 8, ftb::Collective::all_to_all); }
BENCHMARK(BM_CollectiveSeconds_AllReduce8);
BENCHMARK(BM_CollectiveSeconds_AllReduce64);
BENCHMARK(BM_CollectiveSeconds_AllGather64);
BENCHMARK(BM_CollectiveSeconds_AllToAll16);

// Not on the hot path (once per layout), measured to show it is cheap enough to rebuild per plan if needed.
void BM_CommGroupBuild(benchmark::State& state) {
    const ftb::SystemSpec system = hgx(8);
    for (auto _ : state) benchmark::DoNotOptimize(ftb::comm_group(system, 64, 8));
}
BENCHMARK(BM_CommGroupBuild);

}  // namespace

BENCHMARK_MAIN();
