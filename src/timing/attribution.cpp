// Attribution (attribution.hpp): the scheduled phases -> the step's figures, bottleneck and weak points.
#include "timing/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "timing/step_model.hpp"

namespace ftb {

const char* to_string(Resource r) {
    static const char* names[kResourceCount] = {"compute", "memory_bandwidth", "memory_capacity", "pcie",
                                                "gpu_interconnect", "network", "host_memory", "host_cpu",
                                                "storage", "launch_overhead", "pipeline_bubble", "data_loading",
                                                "power"};
    return names[size_t(r)];
}

StreamBusy stream_busy(const std::vector<StepPhase>& phases) {
    StreamBusy b;
    for (const auto& p : phases) {
        b.total_s += p.seconds;
        if (p.resource == Resource::compute) b.compute_s += p.seconds;
        if (p.resource == Resource::memory_bandwidth) b.memory_s += p.seconds;
    }
    return b;
}

void attribute_hidden_compute(Ledger& ledger, const std::array<double, kResourceCount>& rebound_s) {
    double moved = 0;
    for (double v : rebound_s) moved += v;
    if (!(moved > 0)) return;
    // The compute stream's seconds: its kernels and its waits for the host (the windows transfers hid under).
    auto on_stream = [](const StepPhase& p) {
        return p.resource == Resource::compute || p.resource == Resource::memory_bandwidth ||
               p.resource == Resource::launch_overhead;
    };
    double stream = 0;
    for (const auto& p : ledger.phases())
        if (on_stream(p)) stream += p.seconds;
    if (!(stream > 0)) return;
    const double take = std::min(moved, stream);
    for (auto& p : ledger.phases())
        if (on_stream(p)) p.seconds -= p.seconds * take / stream;
    for (size_t r = 0; r < rebound_s.size(); ++r)
        if (rebound_s[r] > 0)
            ledger.add("compute hidden under " + std::string(to_string(Resource(r))) + " transfers (they set the pace)",
                       rebound_s[r] * take / moved, Resource(r));
}

void set_step_totals(TimeResult& res, std::vector<StepPhase> phases) {
    double step = 0;
    for (const auto& p : phases) step += p.seconds;
    res.step_seconds = step;
    std::array<double, kResourceCount> by{};
    for (const auto& p : phases) by[size_t(p.resource)] += p.seconds;
    size_t best = 0;
    for (size_t r = 0; r < by.size(); ++r)
        if (by[r] > by[best]) best = r;
    res.bottleneck = Resource(best);
    res.bottleneck_share = step > 0 ? by[best] / step : 0;
    std::sort(phases.begin(), phases.end(), [](const StepPhase& a, const StepPhase& b) { return a.seconds > b.seconds; });
    res.breakdown = std::move(phases);
}

double hardware_flops_per_step(const ParallelSpec& par, const StageWork& stage, double grad_accumulation) {
    const double per_replica_mb = par.pp > 1 ? stage.first_stage_flops + double(par.pp - 2) * stage.middle_stage_flops +
                                                   stage.last_stage_flops
                                             : stage.first_stage_flops;
    return per_replica_mb * grad_accumulation * double(par.tp * par.cp) * double(par.dp);
}

double peak_flops(const DeviceSpec& dev, Precision precision) {
    const PeakTflops& p = dev.peak_tflops;
    switch (precision) {
        case Precision::fp32: return p.fp32 * 1e12;
        case Precision::tf32: return p.tf32 * 1e12;
        case Precision::fp16: return p.fp16 * 1e12;
        case Precision::bf16: return p.bf16 * 1e12;
        case Precision::fp8: return p.fp8 * 1e12;
    }
    return p.bf16 * 1e12;
}

void set_throughput(TimeResult& res, const Job& job, double real_tokens_per_seq, const StepFlops& flops) {
    const SystemSpec& sys = job.system;
    const double step = res.step_seconds;
    const double gpus = double(sys.total_devices());
    res.tokens_per_step = double(job.spec.train.global_batch) * real_tokens_per_seq;
    res.tokens_per_second = step > 0 ? res.tokens_per_step / step : 0;
    res.tokens_per_second_per_gpu = res.tokens_per_second / gpus;
    res.model_flops_per_step = flops.model;
    res.model_flops_6n_per_step = flops.model_6n;
    res.hardware_flops_per_step = flops.hardware;
    const double peak = peak_flops(sys.device, job.spec.train.precision);
    if (peak > 0 && step > 0) {
        res.mfu = res.model_flops_per_step / (gpus * peak * step);
        res.mfu_6n = res.model_flops_6n_per_step / (gpus * peak * step);
        res.hfu = res.hardware_flops_per_step / (gpus * peak * step);
    }
    const DataSpec& data = job.spec.data;
    if (data.tokens > 0 && res.tokens_per_second > 0)
        res.time_to_train_seconds = steps_to_train(job.spec, res.tokens_per_step) * res.step_seconds;
}

double steps_to_train(const JobSpec& js, double tokens_per_step) {
    const double tokens = js.data.tokens * js.data.epochs;
    if (!(tokens_per_step > 0) || !(tokens > 0)) return 0;
    return std::max(1.0, std::ceil(tokens / tokens_per_step - 1e-9));
}

std::string describe_bottleneck(const Job& job, const TimeResult& t) {
    const SystemSpec& sys = job.system;
    const JobSpec& js = job.spec;
    const ParallelSpec& par = js.parallel;
    const bool cpu = sys.cpu_only;
    const double ga = double(job.spec.grad_accumulation());
    const double share = t.bottleneck_share * 100;
    switch (t.bottleneck) {
        case Resource::compute:
            return fmt::format("compute: the {} runs matmuls and attention for {:.0f}% of the step", sys.device.name, share);
        case Resource::memory_bandwidth:
            return fmt::format("memory bandwidth: elementwise, norm, loss and optimizer kernels stream through {} memory for {:.0f}% of the step",
                               cpu ? "DDR" : "HBM", share);
        case Resource::launch_overhead:
            if (cpu)
                return fmt::format("launch overhead: per-op dispatch and thread-pool hand-offs between {:.0f} short ops take {:.0f}% of the step",
                                   t.kernels_per_step, share);
            return fmt::format("launch overhead: the GPU waits for the host to issue {:.0f} short kernels per step: {:.0f}% of the step",
                               t.kernels_per_step, share);
        case Resource::pipeline_bubble:
            return fmt::format("pipeline bubble: {} stages fed {} micro-batch{} per step leave each GPU idle {:.0f}% of the step",
                               par.pp, int64_t(ga), ga > 1 ? "es" : "", share);
        case Resource::network:
            return fmt::format("network: communication across {} nodes over {} ({:.0f} GB/s per GPU) takes {:.0f}% of the step",
                               sys.nodes, sys.inter_node.name, sys.inter_node.bandwidth_GBps, share);
        case Resource::gpu_interconnect:
            return fmt::format("GPU interconnect: collectives inside the node take {:.0f}% of the step", share);
        case Resource::pcie:
            return fmt::format("PCIe: {} over the GPUs' host links takes {:.0f}% of the step",
                               js.offload.optimizer != OffloadTarget::none || js.offload.params != OffloadTarget::none
                                   ? "offload traffic" : "GPU-to-GPU traffic without NVLink",
                               share);
        case Resource::host_memory:
            return fmt::format("host memory: {} bound by the host's DDR bandwidth: {:.0f}% of the step",
                               cpu ? "socket-to-socket gradient exchange" : "the offloaded optimizer step is", share);
        default:
            return fmt::format("{}: {:.0f}% of the step", to_string(t.bottleneck), share);
    }
}

namespace {

// What each resource is called on the system at hand: a CPU server has no tensor cores, HBM, kernel launches or
// NVLink; its counterparts are the cores' matrix/vector units, DDR, per-op dispatch and the socket link.
struct WeakPointName {
    Resource resource;
    const char* on_gpu;
    const char* on_cpu;
};

constexpr WeakPointName kWeakPointNames[] = {
    {Resource::compute, "tensor-core (matmul) throughput", "core matmul throughput (AMX / AVX-512 / AVX2 units)"},
    {Resource::memory_bandwidth, "HBM bandwidth", "DDR bandwidth of the socket"},
    {Resource::launch_overhead, "host kernel-launch rate (torch.compile / CUDA graphs)",
     "per-op dispatch and thread-pool hand-offs (torch.compile, fewer ops)"},
    {Resource::gpu_interconnect, "GPU-to-GPU fabric bandwidth (NVLink)", "socket-to-socket link bandwidth"},
    {Resource::network, "inter-node network bandwidth per GPU", "inter-node network bandwidth per socket"},
    {Resource::pcie, "PCIe bandwidth", "PCIe bandwidth"},
    {Resource::host_memory, "host DDR bandwidth", "page-fault and cross-socket copy rate of host memory"},
    {Resource::pipeline_bubble, "pipeline bubble (more micro-batches or interleaving)",
     "pipeline bubble (more micro-batches or interleaving)"},
};

}  // namespace

std::vector<WeakPoint> weak_points(const Job& job, const MemoryResult& memory, const TimeResult& base) {
    std::vector<WeakPoint> out;
    const CommGroups groups = build_comm_groups(job);
    for (const WeakPointName& name : kWeakPointNames) {
        const Resource r = name.resource;
        const char* what = job.system.cpu_only ? name.on_cpu : name.on_gpu;
        double step;
        if (r == Resource::pipeline_bubble) {
            double bubble = 0;
            for (const auto& p : base.breakdown)
                if (p.resource == Resource::pipeline_bubble) bubble += p.seconds;
            step = base.step_seconds - bubble / 2;
        } else {
            ResourceScale s;
            s.factor[size_t(r)] = 2;
            step = plan_time_with_groups(job, memory, s, groups).step_seconds;
        }
        const double speedup = step > 0 ? base.step_seconds / step : 1;
        if (speedup > 1.001) out.push_back({r, what, speedup});
    }
    std::sort(out.begin(), out.end(), [](const WeakPoint& a, const WeakPoint& b) { return a.impact > b.impact; });
    out.push_back({Resource::memory_capacity, job.system.cpu_only ? "RAM headroom at the peak" : "GPU memory headroom at the peak",
                   memory.capacity_bytes > 0 ? 1.0 - memory.device_used_bytes / memory.capacity_bytes : 0});
    return out;
}

}  // namespace ftb
