// FSDP1's gradient traffic per unit (fsdp_gradient_traffic.hpp).
#include "timing/fsdp_gradient_traffic.hpp"

namespace ftb {

// FSDP1 (use_orig_params=True) units that hold frozen and trainable weights together: the forward runs on views
// of the unsharded FlatParameter, which requires grad (FlatParamHandle._use_unsharded_views(as_params=False),
// torch/distributed/fsdp/_flat_param.py), so autograd computes the frozen weights' gradients too; the FSDP
// docstring warns such units cost gradient memory "equivalent to not freezing those parameters" (pytorch PR #104967).
bool fsdp_computes_frozen_weight_grads(const WorkContext& c) {
    const ParallelSpec& par = c.job.spec.parallel;
    return c.set.adapters && c.job.framework.fsdp_unit_mixes_frozen && par.zero >= 3 && par.dp > 1;
}

// Those gradients reach the FlatParameter through split_with_sizes' backward, which writes one unit-sized flat
// gradient from the views' gradients (read + write); under no_sync() AccumulateGrad then adds it into the
// unsharded .grad kept from the previous micro-batches (read two, write one) on all but the first micro-batch.
void add_flat_gradient_traffic(Work& bwd, const WorkContext& c, const LayerSpec& l) {
    const double elements = double(l.params()) / c.tp;
    const double ga = double(c.job.spec.grad_accumulation());
    const bool accumulates = ga > 1 && c.job.framework.fsdp_no_sync_accumulation;
    const double accumulate_share = accumulates ? (ga - 1) / ga : 0;
    add_memory_bound(bwd, c, elements * c.set.grad_bytes * (2 + 3 * accumulate_share), 1 + accumulate_share);
}

// FSDP1's post-backward hook on every unit whose gradients sync (torch/distributed/fsdp/_runtime_utils.py
// _post_backward_hook, torch 2.0): the unsharded flat gradient is cast to the reduce dtype
// (`flat_param.grad.to(handle._reduce_dtype)`, read the compute dtype, write the reduce dtype) and the default
// communication hook pre-divides it in place before the reduce-scatter (default_hooks.reduce_scatter_hook:
// `grad.div_(gradient_predivide_factor)`, a factor > 1 for any world size >= 2: read + write). Before that,
// split_with_sizes' backward writes the flat gradient from the views' gradients (read + write in the compute
// dtype), unless add_flat_gradient_traffic counted it already. Under no_sync() only the last micro-batch syncs.
// `elements`: the unit's parameters on this GPU before sharding (a block, or the root unit's embedding and head).
void add_fsdp1_post_backward_traffic(Work& bwd, const WorkContext& c, double elements, bool flat_write_counted) {
    const double ga = double(c.job.spec.grad_accumulation());
    const double sync_share = ga > 1 && c.job.framework.fsdp_no_sync_accumulation ? 1 / ga : 1;
    const double grad_compute = c.set.bytes.weight_compute, grad_reduce = c.set.reduce_bytes;
    const double flat_write = flat_write_counted ? 0 : 2 * grad_compute;
    const bool casts = grad_reduce != grad_compute;
    const double cast = casts ? grad_compute + grad_reduce : 0;
    const double predivide = 2 * grad_reduce;
    // A reduce dtype below the sharded parameter's: the reduced shard is cast back to it for the optimizer
    // (_runtime_utils.py _cast_grad_to_param_dtype, read the reduce dtype, write the parameter's), 1/dp of the unit.
    const double dp = double(c.job.spec.parallel.dp);
    const bool casts_back = grad_reduce < c.set.grad_bytes;
    const double cast_back = casts_back ? (grad_reduce + c.set.grad_bytes) / dp : 0;
    add_memory_bound(bwd, c, elements * (flat_write + sync_share * (cast + predivide + cast_back)),
                     1 + sync_share * ((casts ? 1 : 0) + 1 + (casts_back ? 1 : 0)));
}

bool fsdp1_unit_gradients(const WorkContext& c, bool trains) {
    const ParallelSpec& par = c.job.spec.parallel;
    return trains && c.job.framework.fsdp1_flat_gradients && par.zero >= 3 && par.dp > 1;
}

}  // namespace ftb
