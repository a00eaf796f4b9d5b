#include "ops/recommendations.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "ops/job_change.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

struct Candidate {
    Resource addresses;
    std::string what;
    std::vector<std::string> set;
    bool changes_training;
    std::function<bool(Job&)> apply;
};

// A faster fabric than the current one, from the catalog (next step up in per-GPU bandwidth).
std::string faster_network(const Job& job) {
    const Catalog& cat = Catalog::instance();
    std::string best;
    double best_bw = 1e30;
    for (const auto& n : cat.names("networks")) {
        NetworkSpec s = cat.network(n, {"catalog", "networks"});
        if (s.bandwidth_GBps > job.system.inter_node.bandwidth_GBps * 1.5 && s.bandwidth_GBps < best_bw)
            best = n, best_bw = s.bandwidth_GBps;
    }
    return best;
}

// An NVSwitch server with the same GPU, for jobs whose GPUs talk over PCIe.
std::string nvlink_system(const Job& job) {
    const Catalog& cat = Catalog::instance();
    const std::string family = job.system.device.name.substr(0, 4);   // e.g. "h100"
    for (const auto& n : cat.names("systems")) {
        if (n.find(family) == std::string::npos) continue;   // catalog system names carry their GPU
        if (!cat.system_lists_component(n, "nvswitch")) continue;   // decided before composing its topology
        const SystemSpec s = cat.system(n, {"catalog", "systems"});
        if (s.cpu_only || s.devices_per_node < job.system.devices_per_node) continue;
        if (s.device.name.rfind(family, 0) == 0) return n;
    }
    return {};
}

// Tokens/s per GPU of `job` with only its GPU model replaced by `device` (same server, links and layout).
double per_gpu_speed_with_device(const Job& job, const DeviceSpec& device) {
    Job g = job;
    g.system.device = device;
    return plan_time(g, plan_memory(g)).tokens_per_second_per_gpu;
}

// A change that also swaps the GPU model (a PCIe card for its SXM sibling in an NVLink server) is two gains:
// a faster GPU and the new links. Name both, each as its own speed-up.
std::string split_gain(const Job& job, const TimeResult& before, const Job& trial, const TimeResult& after) {
    if (trial.system.device.name == job.system.device.name || !(before.tokens_per_second_per_gpu > 0)) return {};
    const double gpu_alone = per_gpu_speed_with_device(job, trial.system.device) / before.tokens_per_second_per_gpu;
    const double total = after.tokens_per_second_per_gpu / before.tokens_per_second_per_gpu;
    if (!(gpu_alone > 0)) return {};
    return fmt::format("; also a different GPU ({} instead of {}): x{:.2f} per GPU from the GPU alone, x{:.2f} from the "
                       "server's links and layout",
                       trial.system.device.name, job.system.device.name, gpu_alone, total / gpu_alone);
}

// Settings of the training itself: recompute, attention and loss kernels, compilation, fp8, micro-batch.
void add_training_changes(std::vector<Candidate>& c, const Job& base) {
    const TrainSpec& tr = base.spec.train;
    if (tr.recompute == Recompute::full)
        c.push_back({Resource::compute, "recompute only attention (activation_checkpointing: selective)",
                     {"train.activation_checkpointing=selective"}, false,
                     [](Job& j) { j.spec.train.recompute = Recompute::selective; return true; }});
    if (tr.recompute != Recompute::none)
        c.push_back({Resource::compute, "no activation recompute (activation_checkpointing: none)",
                     {"train.activation_checkpointing=none"}, false,
                     [](Job& j) { j.spec.train.recompute = Recompute::none; return true; }});
    if (tr.attention == Attention::eager)
        c.push_back({Resource::memory_bandwidth, "flash attention (attention: flash)", {"train.attention=flash"}, false,
                     [](Job& j) { j.spec.train.attention = Attention::flash; return true; }});
    if (!tr.compile)
        c.push_back({Resource::launch_overhead, "torch.compile: fused elementwise kernels, fewer launches (compile: true)",
                     {"train.compile=true"}, false, [](Job& j) { j.spec.train.compile = true; return true; }});
    if (tr.loss == LossImpl::standard || tr.loss == LossImpl::fp32_upcast)
        c.push_back({Resource::memory_bandwidth, "fused linear + cross-entropy (loss: fused)", {"train.loss=fused"}, false,
                     [](Job& j) { j.spec.train.loss = LossImpl::fused; return true; }});
    if (tr.precision == Precision::bf16 && base.system.device.peak_tflops.fp8 > 0 && !base.system.cpu_only)
        c.push_back({Resource::compute, "fp8 matmuls (precision: fp8, Transformer Engine)", {"train.precision=fp8"}, true,
                     [](Job& j) { j.spec.train.precision = Precision::fp8; return true; }});
    // A larger micro-batch with the same global batch: more work per launch and per collective.
    c.push_back({Resource::launch_overhead, "the largest micro-batch that fits, same global batch", {}, false,
                 [](Job& j) {
                     int64_t mb = max_micro_batch(j);
                     while (mb > j.spec.train.micro_batch && j.spec.train.global_batch % (mb * j.spec.parallel.dp) != 0) --mb;
                     if (mb <= j.spec.train.micro_batch) return false;
                     j.spec.train.micro_batch = mb;
                     return true;
                 }});
}

// The layout: ZeRO stage, tensor and pipeline parallelism.
void add_layout_changes(std::vector<Candidate>& c, const Job& base) {
    const TrainSpec& tr = base.spec.train;
    const ParallelSpec& p = base.spec.parallel;
    if (p.zero > 0)
        c.push_back({Resource::network, "a lower ZeRO stage: fewer collectives per step (zero: " + std::to_string(p.zero - 1) + ")",
                     {"parallel.zero=" + std::to_string(p.zero - 1)}, false,
                     [](Job& j) { j.spec.parallel.zero -= 1; return true; }});
    if (p.tp > 1)
        c.push_back({Resource::gpu_interconnect, "half the tensor parallelism, twice the data parallelism (tp: " + std::to_string(p.tp / 2) + ")",
                     {"parallel.tp=" + std::to_string(p.tp / 2), "parallel.dp=auto"}, false,
                     [](Job& j) {
                         j.spec.parallel.tp /= 2;
                         j.spec.parallel.dp *= 2;
                         return true;
                     }});
    if (p.pp > 1) {
        c.push_back({Resource::pipeline_bubble, "interleaved pipeline schedule with 2 virtual stages per GPU",
                     {"parallel.pp_schedule=interleaved", "parallel.virtual_stages=2"}, false,
                     [](Job& j) {
                         j.spec.parallel.pp_schedule = PipelineSchedule::interleaved;
                         j.spec.parallel.virtual_stages = std::max<int64_t>(2, j.spec.parallel.virtual_stages * 2);
                         return true;
                     }});
        c.push_back({Resource::pipeline_bubble, "half the pipeline stages, twice the data parallelism (pp: " + std::to_string(p.pp / 2) + ")",
                     {"parallel.pp=" + std::to_string(p.pp / 2), "parallel.dp=auto"}, false,
                     [](Job& j) {
                         j.spec.parallel.pp /= 2;
                         j.spec.parallel.dp *= 2;
                         return true;
                     }});
        c.push_back({Resource::pipeline_bubble, "twice the micro-batches per step (global_batch x2)",
                     {"train.global_batch=" + std::to_string(tr.global_batch * 2)}, true,
                     [](Job& j) { j.spec.train.global_batch *= 2; return true; }});
    }
}

// What is offloaded to the host.
void add_offload_changes(std::vector<Candidate>& c, const Job& base) {
    const ParallelSpec& p = base.spec.parallel;
    const OffloadSpec& off = base.spec.offload;
    if (off.optimizer != OffloadTarget::none)
        c.push_back({Resource::pcie, "keep the optimizer on the GPU (offload.optimizer: none)", {"offload.optimizer=none"}, false,
                     [](Job& j) { j.spec.offload.optimizer = OffloadTarget::none; return true; }});
    if (off.optimizer != OffloadTarget::none && p.dp > 1 && p.zero < 3)
        c.push_back({Resource::pcie, "ZeRO-3 on the GPUs instead of offloading the optimizer", {"offload.optimizer=none", "parallel.zero=3"}, false,
                     [](Job& j) { j.spec.offload.optimizer = OffloadTarget::none; j.spec.parallel.zero = 3; return true; }});
    if (off.params != OffloadTarget::none)
        c.push_back({Resource::pcie, "keep parameters on the GPU (offload.params: none)", {"offload.params=none"}, false,
                     [](Job& j) { j.spec.offload.params = OffloadTarget::none; return true; }});
    if (off.activations != OffloadTarget::none)
        c.push_back({Resource::pcie, "keep activations on the GPU with recompute instead",
                     {"offload.activations=none", "train.activation_checkpointing=full"}, false,
                     [](Job& j) { j.spec.offload.activations = OffloadTarget::none; j.spec.train.recompute = Recompute::full; return true; }});
}

// Other hardware from the catalog: a faster fabric between nodes, an NVLink server for PCIe-only GPUs.
void add_hardware_changes(std::vector<Candidate>& c, const Job& base) {
    if (base.system.nodes > 1) {
        const std::string net = faster_network(base);
        if (!net.empty())
            c.push_back({Resource::network, "a faster fabric between nodes (" + net + ")", {"hardware.inter_node=" + net}, false,
                         [net](Job& j) {
                             j.system.inter_node = Catalog::instance().network(net, {"recommendation", "hardware.inter_node"});
                             return true;
                         }});
    }
    bool pcie_only = !base.system.cpu_only;
    for (const auto& comp : base.system.components) pcie_only &= comp.kind != ComponentKind::nvswitch;
    for (const auto& l : base.system.links) pcie_only &= l.link.name.rfind("nvlink", 0) != 0;
    if (pcie_only && base.system.total_devices() > 1) {
        const std::string sys = nvlink_system(base);
        if (!sys.empty())
            c.push_back({Resource::pcie, "a server with NVLink/NVSwitch between the GPUs (" + sys + ")", {"hardware.system=" + sys}, false,
                         [sys](Job& j) {
                             const int nodes = j.system.nodes;
                             const NetworkSpec net = j.system.inter_node;
                             j.system = Catalog::instance().system(sys, {"recommendation", "hardware.system"});
                             j.system.nodes = nodes;
                             if (net.bandwidth_GBps > 0) j.system.inter_node = net;
                             const int64_t mp = j.spec.parallel.tp * j.spec.parallel.pp * j.spec.parallel.cp;
                             if (j.system.total_devices() % mp != 0) return false;
                             j.spec.parallel.dp = j.system.total_devices() / mp;
                             return true;
                         }});
    }
}

std::vector<Candidate> candidates(const Job& base) {
    std::vector<Candidate> c;
    add_training_changes(c, base);
    add_layout_changes(c, base);
    add_offload_changes(c, base);
    add_hardware_changes(c, base);
    return c;
}

}  // namespace

std::vector<Recommendation> recommend(const Job& job, const MemoryResult& memory, const TimeResult& time, size_t max_results) {
    std::vector<Recommendation> out;
    for (auto& cand : candidates(job)) {
        const std::optional<Job> changed = changed_job(job, cand.apply);
        if (!changed) continue;
        const Job& trial = *changed;
        const MemoryResult m = plan_memory(trial);
        // Never recommend a change that does not fit, nor one that makes a job that fits tight.
        if (!m.fits || !m.host_fits || (m.verdict == MemoryVerdict::tight && memory.verdict == MemoryVerdict::fits)) continue;
        const TimeResult t = plan_time(trial, m);
        if (!(t.step_seconds > 0)) continue;
        // Compare time per real token: a change of global batch changes the step, not the work per token.
        // With another GPU count (another server), compare per GPU.
        const bool same_gpus = trial.system.total_devices() == job.system.total_devices();
        const double speedup = (t.tokens_per_second > 0 && time.tokens_per_second > 0)
                                   ? (same_gpus ? t.tokens_per_second / time.tokens_per_second
                                                : t.tokens_per_second_per_gpu / time.tokens_per_second_per_gpu)
                                   : time.step_seconds / t.step_seconds;
        if (!same_gpus)
            cand.what += " (" + std::to_string(trial.system.total_devices()) + " GPUs; speed-up per GPU)";
        cand.what += split_gain(job, time, trial, t);
        if (speedup < 1.01 && memory.fits) continue;
        Recommendation r;
        r.addresses = cand.addresses;
        r.what = cand.what;
        r.set = cand.set;
        if (r.set.empty()) r.set = {"train.micro_batch=" + std::to_string(trial.spec.train.micro_batch)};
        r.changes_training = cand.changes_training;
        r.device_used_bytes = m.device_used_bytes;
        r.step_seconds = t.step_seconds;
        r.speedup = speedup;
        r.tokens_per_second = t.tokens_per_second;
        out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) { return a.speedup > b.speedup; });
    if (out.size() > max_results) out.resize(max_results);
    return out;
}

}  // namespace ftb
