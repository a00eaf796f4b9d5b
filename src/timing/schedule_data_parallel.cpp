// Data parallelism on the schedule (scheduler.hpp schedule_data_parallel): ZeRO-3/FSDP per-block gathers and
// reduce-scatters, DDP / ZeRO-1/2 gradient sync, and the socket exchange of CPU servers.
#include <algorithm>
#include <cmath>

#include "timing/collective_overlap.hpp"
#include "timing/scheduler.hpp"

namespace ftb {

namespace {

// DDP gradient buckets: bucket_cap_mb=25 (torch.nn.parallel.DistributedDataParallel default).
constexpr double kDdpBucketBytes = 25.0 * 1048576;

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

}  // namespace

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

}  // namespace ftb
