// The scheduler (scheduler.hpp): work on streams, overlap, and the resource of every phase.
#include "timing/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "timing/collective_overlap.hpp"
#include "timing/tp_comm_overlap.hpp"
#include "timing/torch_context_parallel.hpp"

namespace ftb {

double layers_per_stage(const Job& job) {
    return double(job.model.num_layers()) / double(job.spec.parallel.pp);
}

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

// pp-1 micro-batch slots idle per step (GPipe / 1F1B), divided by the virtual stages when interleaved.
double pipeline_bubble_slots(const Job& job) {
    const ParallelSpec& par = job.spec.parallel;
    const double virtual_stages = par.pp_schedule == PipelineSchedule::interleaved ? double(std::max<int64_t>(1, par.virtual_stages)) : 1.0;
    return par.pp > 1 ? double(par.pp - 1) / virtual_stages : 0.0;
}

void schedule_compute(Schedule& s, const ScheduleInputs& in) {
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
    l.add("pipeline bubble", pipeline_bubble_slots(in.job) * in.stage.wall_s, Resource::pipeline_bubble);
    // Transfers on other streams run while the compute stream runs kernels or waits for the host to issue them.
    s.windows.backward_s = in.stage.backward_wall_s;
    s.windows.forward_s = ga * in.stage.forward_wall_s;
}

namespace {

// Userbuffers overlap (parallel.tp_comm_overlap, tp_comm_overlap.hpp) of one dense block's sequence-parallel
// collectives: forward all-gather -> qkv, proj -> reduce-scatter, all-gather -> fc1, fc2 -> reduce-scatter; the
// backward mirrors it on the data-gradient GEMMs, which do the same FLOPs. Returns {exposed, hidden} seconds.
std::pair<double, double> overlapped_block_tp_seconds(const ScheduleInputs& in, double rs_bytes, double ag_bytes) {
    const LayerSpec& l = in.job.model.layers.front();
    const WorkContext c = make_work_context(in.job, in.set, in.rates, in.scale);
    const double m = in.tokens_per_gpu, h = double(l.hidden), up = l.ffn_kind == FfnKind::gated ? 2.0 : 1.0;
    auto gemm_s = [&](double n, double k) { Work w; add_gemm(w, c, m, n / c.tp, k); return w.gpu_seconds(); };
    const double qkv = gemm_s(double(l.q_dim() + 2 * l.kv_dim()), h), proj = gemm_s(h, double(l.q_dim()));
    const double fc1 = gemm_s(up * double(l.ffn_intermediate), h), fc2 = gemm_s(h, double(l.ffn_intermediate));
    // proj and fc2 are row-parallel: their k is split, not n; the FLOPs (what sets the time) are the same.
    const double ag = collective_cost(Collective::all_gather, ag_bytes, in.groups.tp).seconds;
    const double rs = collective_cost(Collective::reduce_scatter, rs_bytes, in.groups.tp).seconds;
    const double chunks = double(in.job.spec.parallel.tp);
    const double one_pass = overlapped_all_gather_exposed_s(ag, qkv, chunks) + overlapped_reduce_scatter_exposed_s(rs, proj, chunks) +
                            overlapped_all_gather_exposed_s(ag, fc1, chunks) + overlapped_reduce_scatter_exposed_s(rs, fc2, chunks);
    const double exposed = 2 * one_pass;   // forward and backward
    return {exposed, 4 * (ag + rs) - exposed};
}

}  // namespace

// Tensor parallel: two all-reduces (or reduce-scatter + all-gather with sequence parallel) of the activations
// per block forward and two backward, on the critical path (Megatron-LM, Shoeybi et al. 2019), unless userbuffers
// overlaps them with the GEMMs (dense blocks with sequence parallelism).
void schedule_tensor_parallel(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.tp <= 1) return;
    const double bytes = in.tokens_per_gpu * double(in.job.model.hidden) * in.set.bytes.act;
    // Sequence parallelism turns each all-reduce into a reduce-scatter and an all-gather, the same traffic. A
    // profile whose fp8 linears gather their inputs (and output gradients) in fp8 halves the all-gather's part:
    // the pair moves what an all-reduce of the mean of the two sizes would.
    const bool fp8_gathers = par.sequence_parallel && in.job.spec.train.precision == Precision::fp8 &&
                             in.job.framework.tp_all_gather_fp8;
    const double ag_bytes = fp8_gathers ? in.tokens_per_gpu * double(in.job.model.hidden) : bytes;
    const CollectiveCost cc = collective_cost(Collective::all_reduce, (bytes + ag_bytes) / 2, in.groups.tp);
    const bool full_recompute = in.stage.recompute.gpu_seconds() > 0 && in.job.spec.train.recompute == Recompute::full;
    const double passes = layers_per_stage(in.job) * (full_recompute ? 1.5 : 1.0);
    if (par.tp_comm_overlap && par.sequence_parallel && in.job.model.layers.front().experts == 0) {
        const auto [exposed, hidden] = overlapped_block_tp_seconds(in, bytes, ag_bytes);
        s.ledger.add("tensor-parallel collectives (exposed beside userbuffers overlap)",
                     in.grad_accumulation * passes * exposed, comm_resource(in.groups.tp, cc));
        add_overlap_slowdown(s, in, in.groups.tp, cc, in.grad_accumulation * passes * hidden);
        s.comm_busy_s += in.grad_accumulation * passes * (exposed + hidden);
        return;
    }
    const double per_mb = cc.seconds * 4 * passes;
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

// Context parallel, all-to-all (DeepSpeed-Ulysses, Jacobs et al. 2023, arXiv 2309.14509 §3.1; Transformer Engine
// cp_comm_type "a2a", AttnFuncWithCPAndQKVOA2A): before the attention q, k and v go from sequence-sharded to
// head-sharded in one all-to-all each, after it the output goes back; the backward sends the output's gradient
// one way and dq, dk, dv the other. The attention waits for its inputs and the projection after it for its output,
// so every exchange is on the critical path; a recompute of the attention repeats the forward's.
void schedule_context_parallel_all_to_all(Schedule& s, const ScheduleInputs& in) {
    const LayerSpec& l0 = in.job.model.layers.front();
    const double tp = double(in.job.spec.parallel.tp), act = in.set.bytes.act;
    const double qkv_bytes = in.tokens_per_gpu * double(l0.q_dim() + 2 * l0.kv_dim()) / tp * act;
    const double out_bytes = in.tokens_per_gpu * double(l0.q_dim()) / tp * act;
    const CollectiveCost qkv = collective_cost(Collective::all_to_all, qkv_bytes, in.groups.cp);
    const CollectiveCost out = collective_cost(Collective::all_to_all, out_bytes, in.groups.cp);
    const double forwards = in.stage.recompute.attention_s > 0 ? 2 : 1;
    const double per_mb = (forwards + 1) * (qkv.seconds + out.seconds) * layers_per_stage(in.job);
    s.ledger.add("context-parallel all-to-all of q, k, v and the attention output", in.grad_accumulation * per_mb,
                 comm_resource(in.groups.cp, qkv));
    s.comm_busy_s += in.grad_accumulation * per_mb;
}

}  // namespace

void schedule_context_parallel(Schedule& s, const ScheduleInputs& in) {
    const ParallelSpec& par = in.job.spec.parallel;
    if (par.cp <= 1) return;
    if (par.cp_exchange == ContextParallelExchange::pass_kv) return schedule_context_parallel_pass_kv(s, in);
    if (par.cp_exchange == ContextParallelExchange::all_to_all) return schedule_context_parallel_all_to_all(s, in);
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
    s.comm_busy_s += seconds;
    if (par.pp_schedule == PipelineSchedule::interleaved && chunks > 1 && in.job.framework.pipeline_p2p_overlap) {
        // Megatron-Core schedules.py forward_backward_pipelining_with_interleaving (overlap_p2p_comm): the forward's
        // activation travels under the next chunk's forward, the gradient under the next chunk's backward.
        const double exposed = chunks * in.grad_accumulation *
                               (overlapped_send_recv_exposed_s(cc.seconds, in.stage.forward.gpu_seconds() / chunks) +
                                overlapped_send_recv_exposed_s(cc.seconds, (in.stage.backward.gpu_seconds() + in.stage.recompute.gpu_seconds()) / chunks));
        s.ledger.add("pipeline send/recv (exposed beside overlap_p2p_comm)", exposed, comm_resource(in.groups.pp, cc));
        add_overlap_slowdown(s, in, in.groups.pp, cc, seconds - exposed);
        return;
    }
    s.ledger.add("pipeline send/recv", seconds, comm_resource(in.groups.pp, cc));
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
