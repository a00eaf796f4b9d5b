// The step-time model (DESIGN.md §4): work items on resources, scheduled on streams, with every second
// of the step attributed to the resource that bound it.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"

namespace ftb {

// CONTRACT.md resource vocabulary.
enum class Resource {
    compute, memory_bandwidth, memory_capacity, pcie, gpu_interconnect, network, host_memory, host_cpu,
    storage, launch_overhead, pipeline_bubble, data_loading, power,
};
inline constexpr int kResourceCount = 13;
const char* to_string(Resource r);

// Speed multipliers per resource (2 = twice as fast); used for weak points.
struct ResourceScale {
    std::array<double, kResourceCount> factor{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    double operator[](Resource r) const { return factor[size_t(r)]; }
};

struct StepPhase {
    std::string phase;
    double seconds = 0;
    Resource resource = Resource::compute;
};

struct WeakPoint {
    Resource resource = Resource::compute;
    std::string what;
    double impact = 1;   // step-time speedup if the resource were 2x better; for memory_capacity, the headroom fraction
};

struct TimeResult {
    double step_seconds = 0;                 // one optimizer step, all micro-batches, wall clock
    std::vector<StepPhase> breakdown;        // sums to step_seconds
    Resource bottleneck = Resource::compute;
    double bottleneck_share = 0;
    std::string bottleneck_sentence;
    double tokens_per_step = 0;              // real tokens of one optimizer step (whole job)
    double tokens_per_second = 0;
    double tokens_per_second_per_gpu = 0;
    double model_flops_per_step = 0;         // what the method needs (src/timing/flops.hpp), no recompute (whole job)
    double model_flops_6n_per_step = 0;      // 6·N·tokens + 12·q_dim·seq per block: the pre-training convention
    double hardware_flops_per_step = 0;      // what the kernels execute (+ recompute, dequantisation; whole job)
    double mfu = 0;                          // model_flops_per_step / (GPUs · dense peak · step)
    double mfu_6n = 0;                       // model_flops_6n_per_step / same
    double hfu = 0;                          // hardware_flops_per_step / same; >= mfu
    std::optional<double> time_to_train_seconds;
    // Busy fractions of one GPU over the step, for the power model.
    double compute_busy = 0;
    double memory_busy = 0;
    double link_busy = 0;
    double communication_seconds = 0;        // transfers of one step on the links (exposed + hidden under compute)
    double kernels_per_step = 0;             // per GPU
    bool power_capped = false;
};

// The whole schedule. Pure: no I/O.
TimeResult plan_time(const Job& job, const MemoryResult& memory, const ResourceScale& scale = {});

// The bottleneck in one sentence with its numbers.
std::string describe_bottleneck(const Job& job, const TimeResult& time);

// Each resource made 2x better, re-scheduled; ranked by speedup. Capacity appears as headroom.
std::vector<WeakPoint> weak_points(const Job& job, const MemoryResult& memory, const TimeResult& base);

}  // namespace ftb
