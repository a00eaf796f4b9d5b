// The optimizer step and host traffic on the schedule (scheduler.hpp): the step on the GPU or the host, ZeRO-Offload
// transfers, streamed parameters and activations, and a CPU step's fresh pages.
#include <algorithm>
#include <cmath>

#include "system/topology.hpp"
#include "timing/scheduler.hpp"

namespace ftb {

namespace {

// Bytes per trainable parameter the optimizer step reads and writes.
double optimizer_bytes_per_param(const ScheduleInputs& in) {
    const TrainingSetup& set = in.set;
    // The fused kernel touches each element once; foreach and for-loop steps run the unfused ops.
    const bool foreach_step = in.job.spec.train.optimizer_impl != OptimizerImpl::fused;
    switch (in.job.spec.train.optimizer) {
        case Optimizer::sgd: return 3 * set.trainable_storage_bytes;
        case Optimizer::sgd_momentum:
        case Optimizer::lion: return 5 * std::max(set.state_bytes, set.trainable_storage_bytes);
        case Optimizer::adamw_8bit:
        case Optimizer::paged_adamw_8bit: return 3 * set.trainable_storage_bytes + 4;
        case Optimizer::paged_adamw: return 3 * set.trainable_storage_bytes + 16;
        default:
            // fused AdamW reads param, grad, m, v and writes param, m, v; torch's foreach AdamW makes eight
            // passes (lerp, mul, addcmul, sqrt, div, add, addcdiv, weight-decay mul): about 20 element accesses.
            return (foreach_step ? 20.0 : 7.0) * std::max(set.state_bytes, set.trainable_storage_bytes) +
                   set.master_bytes_per_param * 2;
    }
}

double trainable_params_here(const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    return in.mem.trainable_params / double(par.pp) / double(par.tp) / double(par.zero >= 1 ? par.dp : 1);
}

double node_gpus(const SystemSpec& sys) {
    return double(std::min<int64_t>(sys.devices_per_node, sys.total_devices()));
}

// ZeRO-Offload: gradients down and parameters up over each GPU's path to host memory, all GPUs of a node at once.
// Without `upload_params` the updated parameters stay on the host and travel with each gather instead
// (schedule_offload_streams).
void schedule_offload_transfers(Schedule& s, const ScheduleInputs& in, double trainable_here, bool upload_params = true) {
    const SystemSpec& sys = in.job.system;
    if (sys.components.empty()) return;
    SystemSpec scaled = sys;
    for (auto& l : scaled.links)
        if (l.link.name.rfind("pcie", 0) == 0) l.link.bandwidth_GBps *= in.scale[Resource::pcie];
    const Topology topo(scaled);
    std::vector<Flow> down, up;
    for (int gi = 0; gi < int(node_gpus(sys)); ++gi) {
        const int gc = topo.gpu(gi);
        if (gc < 0) continue;
        const int host = topo.host_memory_near(gc);
        if (host < 0) continue;
        down.push_back({gc, host, trainable_here * in.set.grad_bytes});
        if (upload_params) up.push_back({host, gc, trainable_here * in.set.bytes.weight_compute});
    }
    double d2h = 0, h2d = 0;
    for (const auto& r : share_links(topo, down)) d2h = std::max(d2h, r.seconds);
    for (const auto& r : share_links(topo, up)) h2d = std::max(h2d, r.seconds);
    s.ledger.add("offload: gradients to host (exposed)", s.windows.hide_under_backward(d2h, Resource::pcie), Resource::pcie);
    s.ledger.add("offload: parameters to GPU", h2d, Resource::pcie);
    s.comm_busy_s += d2h + h2d;
}

}  // namespace

// Fresh (just-mapped) pages a CPU step writes: PyTorch's CPU allocator takes memory from malloc, and every step
// makes these tensors anew, so the kernel faults in and zeroes their pages again (the probed first_touch_GBps).
// Counted: the gradients (zero_grad(set_to_none=True), torch's default since 2.0, allocates them in backward),
// the two out-of-place temporaries per parameter of an unfused AdamW step (torch/optim/adamw.py
// _single_tensor_adamw: `exp_avg_sq.sqrt()` and its division by the bias correction), and the fp32 [tokens x vocab]
// tensors of the standard loss: the logits, their shifted copy (logits[:, :-1] made contiguous), log_softmax's
// output, and in backward the nll gradient and the log_softmax gradient (F.cross_entropy, aten/src/ATen/native/
// LossNLL.cpp, SoftMax.cpp).
double cpu_fresh_page_bytes(const ScheduleInputs& in) {
    const TrainSpec& tr = in.job.spec.train;
    const double trainable = trainable_params_here(in);
    double bytes = trainable * in.set.grad_bytes;
    const bool unfused_adam = tr.optimizer_impl != OptimizerImpl::fused &&
                              (tr.optimizer == Optimizer::adamw || tr.optimizer == Optimizer::adam);
    if (unfused_adam && in.job.spec.offload.optimizer == OffloadTarget::none)
        bytes += 2 * trainable * std::max(in.set.state_bytes, in.set.trainable_storage_bytes);
    if (tr.loss == LossImpl::standard || tr.loss == LossImpl::fp32_upcast)
        bytes += 5.0 * 4 * in.tokens_per_gpu * double(in.job.model.vocab) * in.grad_accumulation;
    return bytes;
}

void schedule_cpu_fresh_pages(Schedule& s, const ScheduleInputs& in) {
    const double rate_GBps = in.job.system.device.first_touch_GBps;
    if (!in.job.system.cpu_only || !(rate_GBps > 0)) return;
    const double seconds = cpu_fresh_page_bytes(in) / (rate_GBps * 1e9 * in.scale[Resource::host_memory]);
    s.ledger.add("page faults on fresh tensors (gradients, optimizer temporaries, logits)", seconds, Resource::host_memory);
}

// Bytes torch's AdamW moves through DRAM per parameter on the CPU, for element sizes p (parameter), g (gradient)
// and s (state). fused (aten/src/ATen/native/cpu/FusedAdamKernel.cpp adam_fused_step_impl): one pass reads param,
// grad, exp_avg, exp_avg_sq and writes param, exp_avg, exp_avg_sq: 2p + g + 4s. for_loop / foreach (torch/optim/
// adamw.py _single_tensor_adamw, torch 1.13; foreach runs the same ops over lists): param.mul_ 2p; exp_avg.mul_ 2s,
// .add_(grad) 2s + g; exp_avg_sq.mul_ 2s, .addcmul_(grad, grad) 2s + g (both operands the same lines); sqrt() and
// the division by the bias correction each write a new tensor (s read, s written, s read for ownership: 3s each);
// .add_(eps) 2s; param.addcdiv_ 2p + 2s: 4p + 2g + 18s. Checked on one core with
// tools/groundtruth/cpu_adamw_single_thread.py (docs/validation.md).
double cpu_adamw_bytes_per_param(OptimizerImpl impl, double p, double g, double s) {
    if (impl == OptimizerImpl::fused) return 2 * p + g + 4 * s;
    return 4 * p + 2 * g + 18 * s;
}

// Intra-op threads a rank steps its shard on: the launcher's (torchrun: OMP_NUM_THREADS=1), or, where the recipe
// re-sizes the pool (torchtune set_torch_num_threads: os.cpu_count() // world_size), the host's cores split among
// the node's ranks. os.cpu_count() counts SMT siblings too; the catalog gives physical cores, a lower bound that
// only matters where the per-core rate, not the sockets' share, binds.
double cpu_optimizer_threads(const ScheduleInputs& in) {
    const FrameworkProfile& fw = in.job.framework;
    const SystemSpec& sys = in.job.system;
    double threads = fw.cpu_optimizer_threads_per_rank;
    if (fw.cpu_optimizer_threads_split_host && sys.host_cpu.cores > 0)
        threads = std::max(threads, std::floor(double(sys.host_cpu.cores) * double(std::max(1, sys.sockets)) / node_gpus(sys)));
    return threads;
}

// torch.optim stepping each rank's shard on the host (FSDP CPU offload), on cpu_optimizer_threads: a rank streams
// at no more than its cores' own rate, and the node's ranks together at no more than the sockets' DDR
// (kCpuStreamFraction of peak). Without a per-core figure for the host CPU, the sockets are shared.
double torch_cpu_optimizer_seconds(const ScheduleInputs& in, double trainable_here) {
    const SystemSpec& sys = in.job.system;
    const TrainingSetup& set = in.set;
    const double p = set.master_bytes_per_param > 0 ? set.master_bytes_per_param : set.trainable_storage_bytes;
    const double bytes = trainable_here * cpu_adamw_bytes_per_param(in.job.spec.train.optimizer_impl, p, set.grad_bytes, set.state_bytes);
    double rank_Bps = double(sys.sockets) * sys.host_cpu.memory_bandwidth_GBps * 1e9 * kCpuStreamFraction / node_gpus(sys);
    const double core_GBps = sys.host_cpu.core_memory_bandwidth_GBps;
    if (core_GBps > 0) rank_Bps = std::min(rank_Bps, cpu_optimizer_threads(in) * core_GBps * 1e9);
    rank_Bps *= in.scale[Resource::host_memory];
    return rank_Bps > 0 ? bytes / rank_Bps : 0;
}

void schedule_optimizer_step(Schedule& s, const ScheduleInputs& in) {
    const double trainable_here = trainable_params_here(in);
    if (in.job.spec.offload.optimizer == OffloadTarget::none) {
        const double seconds = memory_bound_seconds(trainable_here * optimizer_bytes_per_param(in), in.rates) /
                               in.scale[Resource::memory_bandwidth];
        s.ledger.add("optimizer step", seconds, Resource::memory_bandwidth);
        return;
    }
    if (in.job.framework.cpu_optimizer_threads_per_rank > 0) {
        s.ledger.add("CPU optimizer step (offloaded)", torch_cpu_optimizer_seconds(in, trainable_here), Resource::host_memory);
        // FSDP2 CPUOffloadPolicy: the step updates the pinned host shard in place and every unshard copies it to
        // the GPU before its all-gather (_fsdp_param.py FSDPParam.all_gather_inputs: `sharded_param_data.to(
        // self.device, non_blocking=True)`), so there is no upload after the step: the per-gather copies are
        // schedule_offload_streams'. The reduced gradients go down per unit (_fsdp_collectives.py foreach_reduce:
        // `.to(torch.device("cpu"), non_blocking=True)` into pinned memory, awaited in finalize_backward).
        schedule_offload_transfers(s, in, trainable_here, in.job.spec.offload.params == OffloadTarget::none);
        return;
    }
    // ZeRO-Offload: fp32 Adam on the host, bounded by DDR bandwidth shared by the node's GPUs (Ren et al. 2021).
    const SystemSpec& sys = in.job.system;
    const double host_Bps = double(sys.sockets) * sys.host_cpu.memory_bandwidth_GBps * 1e9 * kCpuStreamFraction *
                            in.scale[Resource::host_memory];
    const double cpu_s = host_Bps > 0 ? trainable_here * 28.0 * node_gpus(sys) / host_Bps : 0;
    s.ledger.add("CPU optimizer step (offloaded)", cpu_s, Resource::host_memory);
    schedule_offload_transfers(s, in, trainable_here);
}

// Parameters (ZeRO-Infinity) and saved activations stream over the host link per micro-batch, prefetched under
// compute; only the excess shows.
void schedule_offload_streams(Schedule& s, const ScheduleInputs& in) {
    const JobSpec& js = in.job.spec;
    if (js.offload.params == OffloadTarget::none && js.offload.activations == OffloadTarget::none) return;
    const SystemSpec& sys = in.job.system;
    LinkSpec host_link;
    host_link.bandwidth_GBps = 0;
    for (const auto& l : sys.links)
        if (l.link.name.rfind("pcie", 0) == 0) host_link = l.link;
    if (host_link.bandwidth_GBps <= 0) return;
    host_link.bandwidth_GBps *= in.scale[Resource::pcie] /
                                std::max(1.0, double(sys.devices_per_node) / double(std::max(1, sys.sockets)) / 2);
    double bytes = 0;
    // ZeRO-Infinity: each GPU fetches its own shard from the host per pass (forward and backward); the other
    // shards arrive through the gathers counted above.
    if (js.offload.params != OffloadTarget::none) bytes += 2 * in.mem.params_per_gpu * in.set.bytes.weight_compute;
    bytes += 2 * in.mem.offloaded_activation_bytes;
    const double ga = in.grad_accumulation;
    const double t = host_copy_seconds(bytes, host_link, true);
    // Streams under the forward of every micro-batch and under what is left of the backward window.
    const double window = s.windows.forward_s + s.windows.backward_s;
    if (ga * t > window) s.windows.rebound_s[size_t(Resource::pcie)] += window;
    s.windows.backward_s = std::max(0.0, s.windows.backward_s - ga * t);
    s.ledger.add("offload: parameters/activations over PCIe (exposed)", std::max(0.0, ga * t - window), Resource::pcie);
    s.comm_busy_s += ga * t;
}

}  // namespace ftb
