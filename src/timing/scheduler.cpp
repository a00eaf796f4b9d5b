// The scheduler (scheduler.hpp): work on streams, overlap, and the resource of every phase.
#include "timing/scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "system/topology.hpp"

namespace ftb {

namespace {

// DDP gradient buckets: bucket_cap_mb=25 (torch.nn.parallel.DistributedDataParallel default).
constexpr double kDdpBucketBytes = 25.0 * 1048576;

// A collective running beside compute takes SMs and HBM from it. NCCL runs one CTA per channel, each on an SM of
// its own ("NCCL CTAs won't share an SM with compute kernels"), and "uses the minimal number of SMs to achieve the
// performance of the platform ... on DGX with 8 NICs and a top speed of 190 GB/s, it would use 16 SMs" (NCCL
// maintainer, NVIDIA/nccl issue #689): about 190/16 GB/s of bus bandwidth per SM, up to MAXCHANNELS = 32
// (nccl src/include/device.h). Its traffic crosses HBM "at least 2x ... it can be 3x" the link rate (stored,
// read back, user data; NVIDIA/nccl issue #1428, where a GEMM overlapped with an all-gather on A100 took 2.08 ms
// against 1.18 ms alone).
constexpr double kNcclBusGBpsPerSm = 190.0 / 16;
constexpr double kNcclMaxChannels = 32;
constexpr double kNcclHbmCrossings = 3;

// The bus bandwidth of the group's ring path (the node fabric, or across nodes its GPUs' NICs), the rate NCCL
// sizes its channels for.
double path_bus_GBps(const CommGroup& g) {
    if (g.nodes <= 1) return g.intra_bus_GBps;
    const double net = double(g.ranks_per_node) * g.nic_GBps;
    return g.ranks_per_node > 1 ? std::min(net, g.intra_bus_GBps) : net;
}

// Seconds the compute stream loses while `overlapped_s` of collective `cost` runs beside it: the share of SMs the
// collective holds for the compute-bound kernels, the share of HBM bandwidth for the memory-bound ones. NCCL fixes
// its channel count when the communicator is built, from the bandwidth of the path its graph search found (it
// "uses the minimal number of SMs to achieve the performance of the platform", issue #689; nccl
// src/graph/search.cc ncclTopoCompute sets graph->nChannels for the path's bw), not per call. Each channel's
// CTA holds its SM for the whole kernel, the latency-bound part too (a multi-node ring waits 14 us per network
// step, tuning.cc hwLatencies), so the SMs are the path's bus bandwidth / 11.9 GB/s (not rounded to whole
// channels), held for the collective's full duration; the HBM traffic follows the bytes actually moved.
// The compute-bound kernels lose the larger of the two shares: beside an all-gather on A100-80GB NVLink, a GEMM
// took 2.08 ms against 1.18 ms alone and an attention kernel 0.33 against 0.18 ms (NVIDIA/nccl issue #1428; the
// maintainer: "they're competing for memory bandwidth"), a loss of 43-45%, which the HBM share gives (3 x ~230 GB/s
// of busbw over 2039 x 0.833 GB/s = 41%) and the SM share (~19 of 108 SMs, 18%) does not.
double overlap_slowdown_seconds(const ScheduleInputs& in, const CommGroup& g, const CollectiveCost& cost,
                                double overlapped_s) {
    if (!(overlapped_s > 0) || !(cost.busbw_GBps > 0) || in.rates.sm_count <= 1) return 0;
    const double ctas = std::min(std::max(path_bus_GBps(g), cost.busbw_GBps) / kNcclBusGBpsPerSm, kNcclMaxChannels);
    const double sm_share = std::min(1.0, ctas / double(in.rates.sm_count));
    const double hbm_share = std::min(1.0, kNcclHbmCrossings * cost.busbw_GBps * 1e9 / in.rates.memory_Bps);
    const StageWork& s = in.stage;
    const double compute_bound_s = s.forward.matmul_s + s.forward.attention_s + s.backward.matmul_s +
                                   s.backward.attention_s + s.recompute.matmul_s + s.recompute.attention_s;
    const double compute_share = s.gpu_s > 0 ? compute_bound_s / s.gpu_s : 1;
    return overlapped_s * (compute_share * std::max(sm_share, hbm_share) + (1 - compute_share) * hbm_share);
}

void add_overlap_slowdown(Schedule& s, const ScheduleInputs& in, const CommGroup& g, const CollectiveCost& cost,
                          double overlapped_s) {
    s.ledger.add("compute slowed by overlapped collectives (NCCL SMs and HBM traffic)",
                 overlap_slowdown_seconds(in, g, cost, overlapped_s), comm_resource(g, cost));
}

double layers_per_stage(const Job& job) {
    return double(job.model.num_layers()) / double(job.spec.parallel.pp);
}

// ZeRO-3 / FSDP: gather each block's parameters before its forward and again before its backward, reduce-scatter
// its gradients after; prefetch hides a gather under the previous block's compute.
void schedule_fully_sharded(Schedule& s, const ScheduleInputs& in) {
    const Job& job = in.job;
    const CommGroup& dp = in.groups.dp;
    const double ga = in.grad_accumulation;
    const double tp = double(job.spec.parallel.tp), dp_size = double(job.spec.parallel.dp);
    const double trainable_stage = in.mem.trainable_params / double(job.spec.parallel.pp) / tp;
    const bool fsdp_mixed = in.set.adapters && job.framework.fsdp_unit_mixes_frozen;
    const double layer_params = in.mem.params_per_gpu * dp_size / std::max(1.0, layers_per_stage(job));
    const CollectiveCost gather = collective_cost(Collective::all_gather, layer_params * in.set.bytes.weight_compute, dp);
    const double rs_params = fsdp_mixed ? layer_params
                                        : layer_params * std::min(1.0, trainable_stage / std::max(1.0, in.mem.params_per_gpu * dp_size));
    const CollectiveCost rs = collective_cost(Collective::reduce_scatter, rs_params * in.set.reduce_bytes, dp);
    const bool no_sync = ga > 1 && job.framework.fsdp_no_sync_accumulation;
    const std::vector<double>& fwd = in.stage.layer_forward_s;
    const std::vector<double>& bwd = in.stage.layer_backward_s;
    double exposed = 0, hidden_fwd = 0, hidden_bwd = 0, comm_bound = 0;
    for (size_t k = 0; k < fwd.size(); ++k) {
        exposed += std::max(0.0, gather.seconds - fwd[k]);
        hidden_fwd += std::min(gather.seconds, fwd[k]);
        if (gather.seconds > fwd[k]) comm_bound += fwd[k];
        const double rs_s = no_sync ? rs.seconds / ga : rs.seconds;
        exposed += std::max(0.0, gather.seconds + rs_s - bwd[k]);
        hidden_bwd += std::min(gather.seconds + rs_s, bwd[k]);
        if (gather.seconds + rs_s > bwd[k]) comm_bound += bwd[k];
    }
    s.windows.rebound_s[size_t(comm_resource(dp, gather))] += ga * comm_bound;
    exposed += gather.seconds;   // the first block's gather has nothing to hide under
    // The compute that hid these gathers cannot hide other transfers too.
    s.windows.forward_s = std::max(0.0, s.windows.forward_s - ga * hidden_fwd);
    s.windows.backward_s = std::max(0.0, s.windows.backward_s - hidden_bwd);
    s.ledger.add("ZeRO-3 parameter gathers and gradient reduce-scatters (exposed)", ga * exposed, comm_resource(dp, gather));
    add_overlap_slowdown(s, in, dp, gather, ga * (hidden_fwd + hidden_bwd));
    s.comm_busy_s += ga * double(fwd.size()) * (2 * gather.seconds + rs.seconds);
}

// ZeRO-2 keeps only its shard of the gradients between micro-batches (as the memory walk counts them), so every
// micro-batch's backward reduce-scatters its gradients, not only the last one's: DeepSpeed stage 2 reduces at each
// micro-step (reduce_ready_partitions_and_remove_grads: `if self.partition_gradients or
// self.is_gradient_accumulation_boundary`, deepspeed/runtime/zero/stage_1_and_2.py), as FSDP's SHARD_GRAD_OP does
// outside no_sync(). Each earlier micro-batch's reduction runs under its own backward and the next forward.
void schedule_partitioned_gradient_reductions(Schedule& s, const ScheduleInputs& in, const CollectiveCost& cc) {
    const double earlier = in.grad_accumulation - 1;
    if (earlier <= 0) return;
    const CommGroup& dp = in.groups.dp;
    const double window = in.stage.backward.gpu_seconds() + in.stage.recompute.gpu_seconds() + in.stage.forward.gpu_seconds();
    const double exposed = std::max(0.0, cc.seconds - window);
    s.ledger.add("data-parallel gradient reduce-scatters of the earlier micro-batches (ZeRO-2, exposed)",
                 earlier * exposed, comm_resource(dp, cc));
    add_overlap_slowdown(s, in, dp, cc, earlier * (cc.seconds - exposed));
    if (exposed > 0) s.windows.rebound_s[size_t(comm_resource(dp, cc))] += earlier * window;
    s.comm_busy_s += earlier * cc.seconds;
}

// DDP / ZeRO-1/2: one gradient all-reduce (or reduce-scatter) per step, in buckets that overlap the last
// micro-batch's backward; the last bucket is always exposed.
void schedule_gradient_sync(Schedule& s, const ScheduleInputs& in) {
    const Job& job = in.job;
    const CommGroup& dp = in.groups.dp;
    const int64_t zero = job.spec.parallel.zero;
    const double trainable_stage = in.mem.trainable_params / double(job.spec.parallel.pp) / double(job.spec.parallel.tp);
    const double grad_bytes = trainable_stage * in.set.reduce_bytes;
    const Collective op = zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce;
    const CollectiveCost cc = collective_cost(op, grad_bytes, dp);
    // DDP's bucket_cap_mb, or DeepSpeed's reduce_bucket_size for ZeRO-1/2 (framework profile).
    const double bucket_bytes = zero >= 1 ? job.framework.zero_bucket_elements * in.set.reduce_bytes : kDdpBucketBytes;
    const double bucket = std::min(1.0, bucket_bytes / std::max(1.0, grad_bytes));
    const double last_bucket = cc.seconds * bucket;
    const double exposed = last_bucket + s.windows.hide_under_backward(cc.seconds - last_bucket, comm_resource(dp, cc));
    s.ledger.add("data-parallel gradient sync (exposed)", exposed, comm_resource(dp, cc));
    add_overlap_slowdown(s, in, dp, cc, cc.seconds - exposed);
    s.comm_busy_s += cc.seconds;
    if (zero == 2) schedule_partitioned_gradient_reductions(s, in, cc);
    // DeepSpeed gathers the updated parameter partitions after every step, offloaded or not
    // (ZeroOptimizer.step -> all_gather_dp_groups, deepspeed/runtime/zero/stage_1_and_2.py).
    if (zero >= 1) {
        const CollectiveCost ag = collective_cost(Collective::all_gather, trainable_stage * in.set.bytes.weight_compute, dp);
        s.ledger.add("ZeRO parameter all-gather after the step", ag.seconds, comm_resource(dp, ag));
        s.comm_busy_s += ag.seconds;
    }
}

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

void Ledger::add(const std::string& phase, double seconds, Resource r) {
    if (!(seconds > 0)) return;
    for (auto& p : phases_)
        if (p.phase == phase && p.resource == r) {
            p.seconds += seconds;
            return;
        }
    phases_.push_back({phase, seconds, r});
}

CommGroups build_comm_groups(const Job& job) {
    const ParallelSpec& par = job.spec.parallel;
    const SystemSpec& sys = job.system;
    const int gpn = sys.devices_per_node;
    auto per_node = [&](int64_t inner, int64_t size) {   // ranks of a group on one node, Megatron order tp-cp-dp-pp
        const int64_t span = std::max<int64_t>(1, int64_t(gpn) / std::max<int64_t>(1, inner));
        return int(std::max<int64_t>(1, std::min<int64_t>(size, span)));
    };
    CommGroups g;
    if (sys.cpu_only) return g;
    if (par.tp > 1) g.tp = comm_group(sys, int(par.tp), int(std::min<int64_t>(par.tp, gpn)));
    if (par.cp > 1) g.cp = comm_group(sys, int(par.cp), per_node(par.tp, par.cp));
    if (par.dp > 1) g.dp = comm_group(sys, int(par.dp), per_node(par.tp * par.cp, par.dp));
    if (par.pp > 1) g.pp = comm_group(sys, 2, per_node(par.tp * par.cp * par.dp, 2));
    if (par.ep > 1) g.ep = comm_group(sys, int(par.ep), per_node(par.tp, par.ep));
    return g;
}

CommGroups scaled_comm_groups(const CommGroups& base, const ResourceScale& s) {
    auto scaled = [&](CommGroup g) {
        g.intra_bus_GBps *= g.intra_nvlink ? s[Resource::gpu_interconnect] : s[Resource::pcie];
        g.nic_GBps *= s[Resource::network];
        return g;
    };
    return CommGroups{scaled(base.tp), scaled(base.dp), scaled(base.pp), scaled(base.cp), scaled(base.ep)};
}

Resource comm_resource(const CommGroup& g, const CollectiveCost& cost) {
    if (g.nodes > 1 && cost.network_bound) return Resource::network;
    return g.intra_nvlink ? Resource::gpu_interconnect : Resource::pcie;
}

double OverlapWindows::hide_under_backward(double transfer_s, Resource r) {
    const double hidden = std::min(transfer_s, backward_s);
    backward_s -= hidden;
    if (transfer_s > hidden) rebound_s[size_t(r)] += hidden;
    return transfer_s - hidden;
}

void schedule_compute(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    const Work& F = in.stage.forward;
    const Work& Bw = in.stage.backward;
    const Work& RC = in.stage.recompute;
    const double ga = in.grad_accumulation;
    Ledger& l = s.ledger;
    l.add("forward matmuls", ga * F.matmul_s, Resource::compute);
    l.add("forward attention", ga * F.attention_s, Resource::compute);
    l.add("forward elementwise and memory-bound kernels", ga * F.memory_s, Resource::memory_bandwidth);
    l.add("backward matmuls", ga * Bw.matmul_s, Resource::compute);
    l.add("backward attention", ga * Bw.attention_s, Resource::compute);
    l.add("backward elementwise and memory-bound kernels", ga * Bw.memory_s, Resource::memory_bandwidth);
    l.add("recompute: matmuls and attention", ga * (RC.matmul_s + RC.attention_s), Resource::compute);
    l.add("recompute: elementwise kernels", ga * RC.memory_s, Resource::memory_bandwidth);
    l.add("QLoRA weight dequantisation", ga * (F.dequant_s + Bw.dequant_s + RC.dequant_s), Resource::memory_bandwidth);
    l.add(in.job.system.cpu_only ? "framework per-op overhead" : "GPU idle waiting for kernel launches",
          ga * (in.stage.launch_idle_s() - in.stage.pool_switch_s), Resource::launch_overhead);
    l.add("GEMM calls waiting for the cores (BLAS and OpenMP thread pools take turns)", ga * in.stage.pool_switch_s,
          Resource::launch_overhead);
    // pp-1 micro-batch slots idle per step (GPipe / 1F1B), divided by the virtual stages when interleaved.
    const double virtual_stages = par.pp_schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(1, par.virtual_stages)) : 1.0;
    const double bubble_slots = par.pp > 1 ? double(par.pp - 1) / virtual_stages : 0.0;
    l.add("pipeline bubble", bubble_slots * in.stage.wall_s, Resource::pipeline_bubble);
    s.windows.backward_s = Bw.gpu_seconds() + RC.gpu_seconds();
    s.windows.forward_s = ga * F.gpu_seconds();
}

// Tensor parallel: two all-reduces (or reduce-scatter + all-gather with sequence parallel) of the activations
// per block forward and two backward, on the critical path (Megatron-LM, Shoeybi et al. 2019).
void schedule_tensor_parallel(Schedule& s, const ScheduleInputs& in) {
    if (in.job.spec.parallel.tp <= 1) return;
    const double bytes = in.tokens_per_gpu * double(in.job.model.hidden) * in.set.bytes.act;
    const CollectiveCost cc = collective_cost(Collective::all_reduce, bytes, in.groups.tp);
    const bool full_recompute = in.stage.recompute.gpu_seconds() > 0 && in.job.spec.train.recompute == Recompute::full;
    const double per_mb = cc.seconds * 4 * layers_per_stage(in.job) * (full_recompute ? 1.5 : 1.0);
    s.ledger.add("tensor-parallel all-reduces", in.grad_accumulation * per_mb, comm_resource(in.groups.tp, cc));
    s.comm_busy_s += in.grad_accumulation * per_mb;
}

namespace {

// Context parallel, ring: k/v chunks passed around the group, each hidden under the attention of the previous chunk.
void schedule_context_parallel_ring(Schedule& s, const ScheduleInputs& in, double kv_bytes) {
    const ParallelSpec& par = in.job.spec.parallel;
    const CollectiveCost cc = collective_cost(Collective::send_recv, kv_bytes, in.groups.cp);
    const double fwd_comm = cc.seconds * double(par.cp - 1) * layers_per_stage(in.job);
    const double exposed = std::max(0.0, fwd_comm - in.stage.attention_forward_s) +
                           std::max(0.0, 2 * fwd_comm - in.stage.attention_backward_s);
    s.ledger.add("context-parallel k/v exchange (exposed)", in.grad_accumulation * exposed, comm_resource(in.groups.cp, cc));
    add_overlap_slowdown(s, in, in.groups.cp, cc, in.grad_accumulation * (3 * fwd_comm - exposed));
    s.comm_busy_s += in.grad_accumulation * 3 * fwd_comm;
}

// Context parallel, all-gather (TransformerEngine AttnFuncWithCPAndKVAllGather, Llama 3 §3.3.2): per layer the
// forward all-gathers k and v (one collective each), the backward gathers them again and reduce-scatters dk and
// dv over the whole sequence; the attention waits for each, so all of it is on the critical path. A recompute that
// repeats the attention core repeats the forward's gathers.
void schedule_context_parallel_all_gather(Schedule& s, const ScheduleInputs& in, double kv_bytes) {
    const ParallelSpec& par = in.job.spec.parallel;
    const double gathered_bytes = kv_bytes / 2 * double(par.cp);   // one of k, v over the whole sequence
    const CollectiveCost ag = collective_cost(Collective::all_gather, gathered_bytes, in.groups.cp);
    const CollectiveCost rs = collective_cost(Collective::reduce_scatter, gathered_bytes, in.groups.cp);
    const double gathers = in.stage.recompute.attention_s > 0 ? 3 : 2;   // forward, backward, recompute
    const double per_mb = 2 * (gathers * ag.seconds + rs.seconds) * layers_per_stage(in.job);
    s.ledger.add("context-parallel k/v all-gather and dk/dv reduce-scatter", in.grad_accumulation * per_mb,
                 comm_resource(in.groups.cp, ag));
    s.comm_busy_s += in.grad_accumulation * per_mb;
}

}  // namespace

void schedule_context_parallel(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.cp <= 1) return;
    const double kv_bytes = in.tokens_per_gpu * 2 * double(in.job.model.layers.front().kv_dim()) / double(par.tp) * in.set.bytes.act;
    if (in.job.spec.parallel.cp_exchange == ContextParallelExchange::all_gather) schedule_context_parallel_all_gather(s, in, kv_bytes);
    else schedule_context_parallel_ring(s, in, kv_bytes);
}

// Expert parallel: all-to-all dispatch and combine, forward and backward.
void schedule_expert_parallel(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.ep <= 1) return;
    const LayerSpec& l0 = in.job.model.layers.front();
    const double bytes = in.tokens_per_gpu * double(l0.experts_per_token) * double(in.job.model.hidden) * in.set.bytes.act;
    const CollectiveCost cc = collective_cost(Collective::all_to_all, bytes, in.groups.ep);
    double moe_layers = 0;
    for (const auto& l : in.job.model.layers) moe_layers += l.experts > 0;
    const double per_mb = 4 * cc.seconds * moe_layers / double(par.pp);
    s.ledger.add("expert-parallel all-to-all", in.grad_accumulation * per_mb, comm_resource(in.groups.ep, cc));
    s.comm_busy_s += in.grad_accumulation * per_mb;
}

// Pipeline: activations to the next stage and gradients back, per micro-batch and model chunk. With sequence
// parallelism the stage boundary tensor is sharded over tp (Megatron-LM megatron/core/pipeline_parallel/
// schedules.py get_tensor_shapes: seq_length // tp_size); interleaving crosses v chunk boundaries per rank, so
// "the amount of communication also increases by v" (Narayanan et al. 2021, §2.2.2).
void schedule_pipeline_transfers(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.pp <= 1) return;
    const double sp_div = par.sequence_parallel ? double(par.tp) : 1.0;
    const double chunks = par.pp_schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(1, par.virtual_stages)) : 1.0;
    const double bytes = in.tokens_per_gpu * double(in.job.model.hidden) * in.set.bytes.act / sp_div;
    const CollectiveCost cc = collective_cost(Collective::send_recv, bytes, in.groups.pp);
    const double seconds = 2 * chunks * in.grad_accumulation * cc.seconds;
    s.ledger.add("pipeline send/recv", seconds, comm_resource(in.groups.pp, cc));
    s.comm_busy_s += seconds;
}

void schedule_data_parallel(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.dp <= 1) return;
    if (par.zero >= 3) schedule_fully_sharded(s, in);
    else schedule_gradient_sync(s, in);
}

void schedule_socket_gradient_exchange(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.dp <= 1) return;
    double link_GBps = 0;
    for (const auto& l : in.job.system.links) link_GBps = std::max(link_GBps, l.link.bandwidth_GBps * l.link.achievable_fraction);
    if (link_GBps <= 0) return;
    const double bytes = in.mem.trainable_params * in.set.grad_bytes;
    const double n = double(par.dp);
    const double seconds = 2 * (n - 1) / n * bytes / (link_GBps * 1e9 * in.scale[Resource::host_memory]);   // ring
    s.ledger.add("gradient all-reduce between sockets", seconds, Resource::host_memory);
}

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
    if (js.offload.activations != OffloadTarget::none) bytes += 2 * in.mem.breakdown.activations_bytes;
    const double ga = in.grad_accumulation;
    const double t = host_copy_seconds(bytes, host_link, true);
    // Streams under the forward of every micro-batch and under what is left of the backward window.
    const double window = s.windows.forward_s + s.windows.backward_s;
    if (ga * t > window) s.windows.rebound_s[size_t(Resource::pcie)] += window;
    s.windows.backward_s = std::max(0.0, s.windows.backward_s - ga * t);
    s.ledger.add("offload: parameters/activations over PCIe (exposed)", std::max(0.0, ga * t - window), Resource::pcie);
    s.comm_busy_s += ga * t;
}

Schedule schedule_step(const ScheduleInputs& in) {
    Schedule s;
    schedule_compute(s, in);
    if (!in.job.system.cpu_only) {
        schedule_tensor_parallel(s, in);
        schedule_context_parallel(s, in);
        schedule_expert_parallel(s, in);
        schedule_pipeline_transfers(s, in);
        schedule_data_parallel(s, in);
    } else {
        schedule_socket_gradient_exchange(s, in);
    }
    schedule_optimizer_step(s, in);
    schedule_cpu_fresh_pages(s, in);
    schedule_offload_streams(s, in);
    return s;
}

}  // namespace ftb
