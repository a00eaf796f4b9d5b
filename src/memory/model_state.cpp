#include "memory/model_state.hpp"

#include <algorithm>

namespace ftb {
namespace {

// auto-gptq's PyTorch dequantisation, taken for micro-batches of at least kernel_switch_threshold = 128 tokens
// (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py QuantLinear.forward, v0.4.2, the path Qwen's finetune.py runs
// with exllama disabled): bitwise_right_shift of the int32 words broadcast 8 ways writes one int32 per weight,
// and .to(torch.int8) writes a byte beside it before the int32 tensor is freed (5 bytes per weight at once); the
// later steps (int8 minus zeros, times the fp16 scales) hold at most 1 + 1 + 2.
constexpr double kGptqUnpackBytesPerWeight = 4 + 1;
constexpr int64_t kGptqKernelSwitchTokens = 128;

bool gptq_dequantises_in_torch(const Job& job, const TrainingSetup& set) {
    const QloraConfig& q = job.spec.train.qlora;
    return quantised_base(job.spec.train.method) && q.kernel == QloraKernel::auto_gptq && q.bits == 4 &&
           set.tokens_per_micro_batch >= kGptqKernelSwitchTokens;
}

// The dequantised weight goes into torch.matmul(x, weight); mm's derivative for its first input needs the second
// (tools/autograd/derivatives.yaml, mm: mm_mat1_backward(grad, mat2, ...)), so autograd keeps the fp16 weight
// whenever the input requires grad (always with LoRA: PEFT's enable_input_require_grads). With full recompute
// only the block being recomputed in backward holds them; otherwise every block keeps them from its forward.
void add_gptq_saved_weights(const Job& job, const TrainingSetup& set, const StageParams& p, WeightBytes& w) {
    if (!gptq_dequantises_in_torch(job, set)) return;
    w.dequant_saved_in_forward = job.spec.train.recompute != Recompute::full;
    w.dequant_saved = (w.dequant_saved_in_forward ? p.quantised : p.largest_layer_quantised) * set.bytes.weight_compute;
}

// DeepSpeed ZeRO-3 at the turn from forward to backward: after the last blocks' forward, the trace runs the head
// (forward, then backward: two fetches of its weight) and those blocks' backward in reverse. __params_to_release
// (partitioned_param_coordinator.py) walks the trace from the next module and keeps every parameter met before
// stage3_max_reuse_distance elements are traversed, so block k from the end (1 = last) stays gathered when
// 2 x head + 2 x (k - 1) blocks + one block lie within the distance. Returns the blocks kept beyond the
// `zero3_live_layers` the walk already holds gathered.
double blocks_kept_across_the_turn(const Job& job, const StageParams& p) {
    const double reuse = job.framework.zero3_max_reuse_elements, block = p.largest_layer;
    if (reuse <= 0 || block <= 0 || p.head_weights <= 0) return 0;
    const int64_t blocks = job.spec.parallel.pp > 1 ? 0 : int64_t(job.model.num_layers());
    int64_t kept = 0;
    while (kept < blocks && 2 * p.head_weights + 2 * double(kept) * block + block < reuse) ++kept;
    return std::max(0.0, double(kept - job.framework.zero3_live_layers));
}

// DeepSpeed ZeRO-3 with parameters offloaded to the host: gathering the head (one parameter, the
// all_gather_coalesced single-parameter path) allocates the full `param_buffer` and then copies the rank's host
// partition to the device (`param_ds_tensor.to(device)`) as the all-gather's input, so at that moment the head's
// weight is on the device once whole and once more as this rank's share (partition_parameters.py, DeepSpeed
// 38327e0 and v0.7.7). With one rank DeepSpeed from 0.9.0 skips the all-gather (`_no_gather_coalesced`, #2953).
double head_staging_bytes(const Job& job, const TrainingSetup& set, const StageParams& p) {
    const FrameworkProfile& fw = job.framework;
    if (!fw.zero3_offload_stages_partition || job.spec.offload.params == OffloadTarget::none) return 0;
    if (set.dp_shard == 1 && !fw.zero3_single_rank_gathers) return 0;
    return p.head_weights * set.bytes.weight_compute / double(set.dp_shard);
}

// Parameters outside the blocks on this stage (the embedding, the final norm, the output head): FSDP2's root unit.
double edge_params(const StageParams& p) { return p.trainable + p.frozen + p.quantised - p.blocks; }

bool pipelined_fsdp2(const Job& job) {
    return job.spec.parallel.pp > 1 && job.spec.parallel.zero >= 3 && job.framework.pp_fsdp_accumulates_unsharded;
}

// FSDP2's units beyond the prefetched blocks: under pipelining the stage stays gathered from its first
// micro-batch's forward to the step's end (reshard_after_forward=False, no reshard after a non-final backward);
// otherwise the root unit is gathered through backward. The all-gather outputs of the two largest units sit in the
// all-gather stream's pool.
void add_fsdp2_units(const Job& job, const TrainingSetup& set, const StageParams& p, WeightBytes& w) {
    const FrameworkProfile& fw = job.framework;
    const double edges = edge_params(p) * set.bytes.weight_compute;
    const double q = p.largest_layer_quantised;   // gathered as stored (weight_bytes)
    const double block = (p.largest_layer - q) * set.bytes.weight_compute + q * set.quant_bytes_per_param;
    if (fw.fsdp2_stream_pools) w.all_gather_pool = std::max(edges, block) + std::min(edges, block);
    if (pipelined_fsdp2(job)) {
        w.gathered = (p.trainable + p.frozen) * set.bytes.weight_compute + p.quantised * set.quant_bytes_per_param;
        w.head_gathered = 0;
        return;
    }
    if (fw.fsdp2_root_unit) w.root_gathered = edges;
}

}  // namespace

WeightBytes weight_bytes(const Job& job, const TrainingSetup& set, const StageParams& p) {
    const ParallelSpec& par = job.spec.parallel;
    const bool zero3 = par.zero >= 3;
    const double shard = double(set.dp_shard);
    WeightBytes w;
    w.stored = (p.trainable + p.held) * set.trainable_storage_bytes + p.frozen * set.frozen_storage_bytes +
               p.quantised * set.quant_bytes_per_param;
    if (zero3) {
        w.stored /= shard;
        // Prefetch keeps `zero3_live_layers` full blocks gathered in the compute dtype; quantised weights are
        // gathered as stored (torchao NF4Tensor.fsdp_pre_all_gather all-gathers quantized_data, quantized_scalers
        // and quantization_factor, pytorch/ao torchao/dtypes/nf4tensor.py; bitsandbytes Params4bit under FSDP
        // shards and gathers its packed uint8 storage).
        const double quantised = p.largest_layer_quantised;
        w.gathered = double(job.framework.zero3_live_layers) *
                     ((p.largest_layer - quantised) * set.bytes.weight_compute + quantised * set.quant_bytes_per_param);
        // The head's matmul reads the whole weight: it is gathered from the head's forward through its backward, which
        // comes first (DeepSpeed partitioned_param_coordinator.py fetch_sub_module gathers a module's parameters
        // before it runs; the reuse in the head's backward lies within stage3_max_reuse_distance, so
        // release_sub_module keeps it; FSDP keeps the root unit, which holds the head, unsharded after forward).
        w.head_gathered = p.head_weights * set.bytes.weight_compute + blocks_kept_across_the_turn(job, p) * p.largest_layer *
                                                                          set.bytes.weight_compute;
        w.head_staging = head_staging_bytes(job, set, p);
        add_fsdp2_units(job, set, p, w);
    } else if (params_sharded_at_rest(job)) {
        // FSDP SHARD_GRAD_OP: each unit stays unsharded from its forward until after its backward
        // (torch/distributed/fsdp/api.py ShardingStrategy.SHARD_GRAD_OP), so at the peak the whole stage is gathered
        // in the compute dtype (MixedPrecision param_dtype), beside the fp32 shards.
        w.stored /= shard;
        w.gathered = (p.trainable + p.frozen) * set.bytes.weight_compute + p.quantised * set.quant_bytes_per_param;
    }
    if (job.spec.offload.params != OffloadTarget::none) {
        w.stored = 0;
        w.host = (p.trainable + p.frozen) * set.bytes.weight_compute / shard;
    }
    // torch.amp: each fp32 weight is cast per matmul and the copy is kept for backward (the grad of the input).
    if (set.amp_weight_copies) w.amp_copies = p.linear_weights * set.bytes.weight_compute / (zero3 ? shard : 1);
    const double unpack = gptq_dequantises_in_torch(job, set) ? kGptqUnpackBytesPerWeight : set.bytes.weight_compute;
    w.dequant = p.largest_quantised * unpack;
    add_gptq_saved_weights(job, set, p, w);
    return w;
}

namespace {

// DeepSpeed with contiguous_gradients (its default) copies gradients into a flat bucket of reduce_bucket_size
// elements in the parameters' dtype, allocated whole whatever the number of trainable parameters (a LoRA run too).
// ZeRO-3 allocates it once, at init, and keeps it (deepspeed/runtime/zero/stage3.py _setup_for_real_optimizer:
// `self.__ipg_bucket_flat_buffer = torch.empty(self.reduce_bucket_size, dtype=self.dtype, device=...)`, DeepSpeed
// 0003660); ZeRO-1/2 allocate it at every backward (stage_1_and_2.py DeepSpeedZeroOptimizer.backward: buf_0, and a
// second buf_1 with overlap_comm, off by default below stage 3) and drop it in the reduction epilogue.
void add_contiguous_gradient_buffer(const Job& job, const TrainingSetup& set, GradientBytes& g) {
    if (!job.framework.zero_contiguous_gradients || job.spec.parallel.zero < 1) return;
    g.buffers = job.framework.zero_bucket_elements * set.trainable_storage_bytes;
    g.buffers_kept = job.spec.parallel.zero >= 3;
}

// FSDP2: under pipelining the stage's gradients accumulate unsharded in the reduce dtype (one unit's gradient in
// the parameters' dtype in flight before it is added); the root unit keeps the head's unsharded gradient until
// its post-backward at the end; the sharded gradients are made on the reduce-scatter stream.
void add_fsdp2_gradients(const Job& job, const TrainingSetup& set, const StageParams& p, GradientBytes& g) {
    const FrameworkProfile& fw = job.framework;
    if (job.spec.parallel.zero < 3 || job.spec.offload.optimizer != OffloadTarget::none || set.adapters) return;
    if (fw.fsdp2_stream_pools) {
        g.on_side_stream = true;
        g.reduce_scatter_pool = g.resident + p.largest_layer * set.reduce_bytes / double(set.dp_shard);
    }
    if (pipelined_fsdp2(job)) {
        g.accumulated = p.trainable * set.reduce_bytes;
        g.buffers = p.largest_layer * set.bytes.weight_compute;
        return;
    }
    if (fw.fsdp2_root_unit) g.root_unsharded = p.head_matrix * set.bytes.weight_compute;
}

}  // namespace

GradientBytes gradient_bytes(const Job& job, const TrainingSetup& set, const StageParams& p) {
    const ParallelSpec& par = job.spec.parallel;
    const FrameworkProfile& fw = job.framework;
    const bool zero3 = par.zero >= 3;
    const bool opt_offload = job.spec.offload.optimizer != OffloadTarget::none;
    const bool in_backward = job.spec.train.optimizer_in_backward;
    GradientBytes g;
    // FSDP units that mix frozen and trainable weights keep gradients for the whole unit.
    const bool fsdp_mixed_units = zero3 && set.adapters && fw.fsdp_unit_mixes_frozen;
    g.full = (fsdp_mixed_units ? std::max(p.trainable, p.blocks) : p.trainable) * set.grad_bytes;
    g.resident = g.full;
    if (par.zero >= 2) g.resident = g.full / double(set.dp_shard);
    if (opt_offload) g.resident = 0;   // reduced gradients stream to the host optimizer
    if (par.zero >= 2 || opt_offload) {
        // DeepSpeed reduce bucket / FSDP's unsharded gradient of the block in flight, in the reduce dtype.
        // FSDP (full shard or SHARD_GRAD_OP) reduce-scatters one unit's unsharded gradient at a time.
        const bool fsdp_units = params_sharded_at_rest(job);
        const double bucket = fsdp_units ? p.largest_layer * set.reduce_bytes : fw.zero_bucket_elements * set.grad_bytes;
        g.buffers = std::min(bucket, g.full);
        // FSDP2: the previous unit's reduce-scatter input (its gradients, copied in before they were freed) is held
        // until this unit's post-backward: _fsdp_collectives.py foreach_reduce returns it, post_backward keeps it
        // in comm_ctx.reduce_scatter_state and drops it only at the next unit's post_backward. Full fine-tuning
        // (LoRA units' trainable gradients are a small part of `bucket`, which already bounds them from above).
        if (fsdp_units && fw.fsdp2_holds_reduce_scatter_input && !set.adapters) g.buffers += std::min(bucket, g.full);
    }
    add_fsdp2_gradients(job, set, p, g);
    add_contiguous_gradient_buffer(job, set, g);
    // DDP flat buckets, over every parameter that requires a gradient, reached or not (torch/nn/parallel/distributed.py
    // _build_params_for_reducer keeps `p.requires_grad`): the held ones too.
    if (par.zero == 0 && par.dp > 1 && fw.ddp_gradient_buckets) g.buffers = g.full + p.held * set.grad_bytes;
    // Optimizer in backward: gradients are consumed layer by layer, at most one block's worth exists.
    if (in_backward) g.resident = std::min(g.resident, p.largest_layer * set.grad_bytes);
    g.persist = set.grad_accumulation > 1 && !in_backward && g.accumulated == 0;
    // The output head's gradient is formed first in backward. A head tied to the embedding is used twice, so
    // autograd's engine accumulates both uses in the AccumulateGrad node's input buffer and only hands the sum on
    // (post-accumulate-grad hooks included, i.e. the optimizer-in-backward step) after the embedding's backward,
    // at the very end (torch/csrc/autograd/engine.cpp, InputBuffer).
    if (par.zero < 2 && !opt_offload) {
        g.head = p.head_matrix * set.grad_bytes;
        g.head_held = p.head_tied;
    }
    // Accumulating under FSDP no_sync(): gradients stay unsharded between micro-batches.
    if (zero3 && set.grad_accumulation > 1 && fw.fsdp_no_sync_accumulation) g.resident = g.full;
    return g;
}

OptimizerBytes optimizer_bytes(const Job& job, const TrainingSetup& set, const StageParams& p) {
    const ParallelSpec& par = job.spec.parallel;
    const TrainSpec& tr = job.spec.train;
    const double shard = par.zero >= 1 ? double(set.dp_shard) : 1.0;
    OptimizerBytes o;
    o.resident = (p.trainable * set.optimizer_bytes_per_param + p.adafactor_state * 4) / shard;
    const bool offload = job.spec.offload.optimizer != OffloadTarget::none;
    if (offload) {
        // ZeRO-Offload keeps fp32 master weights, states and fp32 gradients in host memory (Ren et al. 2021).
        o.host = p.trainable * (set.optimizer_bytes_per_param + (set.master_bytes_per_param > 0 ? 0 : 4) + 4) / shard;
        o.resident = 0;
    }
    if (tr.optimizer == Optimizer::paged_adamw_8bit || tr.optimizer == Optimizer::paged_adamw) {
        // bitsandbytes paged optimizers allocate states in CUDA unified memory, outside PyTorch's allocator:
        // nvidia-smi sees them, torch.cuda.max_memory_allocated does not.
        o.paged = o.resident;
        o.resident = 0;
    }
    const bool adam_like = tr.optimizer == Optimizer::adamw || tr.optimizer == Optimizer::adam || tr.optimizer == Optimizer::lion;
    if (!offload && adam_like) {
        // torch.optim _multi_tensor_adamw: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs) is one state-sized
        // intermediate over every parameter it steps at once; _single_tensor_adamw (for-loop) makes it one tensor at
        // a time; the fused kernel makes none (torch/optim/adamw.py).
        const double all_at_once = tr.optimizer_in_backward ? p.largest_layer : p.trainable / shard;
        if (tr.optimizer_impl == OptimizerImpl::foreach) o.step_temp = all_at_once * set.state_bytes;
        if (tr.optimizer_impl == OptimizerImpl::for_loop)
            o.step_temp = std::min(all_at_once, p.largest_trainable_matrix / shard) * set.state_bytes;
    }
    return o;
}

}  // namespace ftb
