// FSDP2's compute-stream copies (fsdp2_copies.hpp), read from torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py.
#include "timing/fsdp2_copies.hpp"

namespace ftb {

bool fsdp2_unit_copies(const WorkContext& c) {
    const Job& job = c.job;
    const ParallelSpec& par = job.spec.parallel;
    // fsdp2_stream_pools marks the profiles whose sharding is fully_shard (torchtitan, torchtune).
    const int64_t shards = par.dp * (job.framework.zero_shards_over_cp ? par.cp : 1);
    return job.framework.fsdp2_stream_pools && par.zero >= 3 && shards > 1;
}

// foreach_all_gather_copy_out: the current (compute) stream waits for the all-gather, then
// torch.ops.fsdp.split_with_sizes_copy copies the gathered buffer into the unsharded parameters (read + write,
// the gathered dtype). The unit is gathered before its forward and, resharded after it, again before its backward;
// under pipelining torchtitan keeps it unsharded (apply_fsdp: reshard_after_forward=False) and gathers once a step.
// foreach_reduce: foreach_reduce_scatter_copy_in (torch.ops.fsdp.chunk_cat into the reduce dtype) runs on the
// current stream before the reduce-scatter stream waits for it: read the gradient, write the reduce dtype; under
// pipelining the gradients sync once a step (pp_fsdp_accumulates_unsharded), else each micro-batch unless the
// profile accumulates under no_sync.
void add_fsdp2_unit_copies(Work& fwd, Work& bwd, const WorkContext& c, double elements, bool syncs_gradients) {
    const Job& job = c.job;
    const double ga = double(job.spec.grad_accumulation());
    const bool stays_gathered = job.spec.parallel.pp > 1 && job.framework.pp_fsdp_accumulates_unsharded;
    const double gather_share = stays_gathered ? 1 / ga : 1;
    // QLoRA units gather their quantised weights (torchtune's NF4Tensor implements fsdp_pre_all_gather).
    const double gathered_bytes = c.set.quant_bytes_per_param > 0 ? c.set.quant_bytes_per_param : c.set.bytes.weight_compute;
    const double copy_out_bytes = 2 * elements * gathered_bytes * gather_share;
    add_memory_bound(fwd, c, copy_out_bytes, gather_share);
    if (!stays_gathered) add_memory_bound(bwd, c, copy_out_bytes, 1);
    if (!syncs_gradients) return;
    const bool once_per_step = stays_gathered || (ga > 1 && job.framework.fsdp_no_sync_accumulation);
    const double sync_share = once_per_step ? 1 / ga : 1;
    add_memory_bound(bwd, c, elements * (c.set.bytes.weight_compute + c.set.reduce_bytes) * sync_share, sync_share);
}

}  // namespace ftb
