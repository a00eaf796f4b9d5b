// torchao Float8Linear casts (fp8_casts.hpp).
#include "timing/fp8_casts.hpp"

namespace ftb {

// torchao/float8 (the torchao torchtitan's benchmarks name, eab345c, Dec 2024), tensorwise dynamic scaling:
// - forward (float8_linear.py Float8Linear.forward): the input and the weight are each cast by
//   hp_tensor_to_float8_dynamic (float8_scaling_utils.py): tensor_to_amax (float8_utils.py:
//   `torch.max(torch.abs(x))`, one read of the bf16 tensor), then hp_tensor_and_scale_to_float8
//   (float8_tensor.py _ToFloat8ConstrFunc: `tensor.to(torch.float32) * scale`, to_fp8_saturated's clamp and
//   `.to(float8_dtype)`). Compiled, Inductor runs the reduction as one kernel and the pointwise chain as a second
//   (the cast needs the finished global max): 2 B read + 2 B read + 1 B written per element. Eager, every op is a
//   kernel of its own: abs (2 + 2), max (2), to fp32 (2 + 4), mul (4 + 4), clamp (4 + 4), to fp8 (4 + 1): 33 B.
// - backward (manual_float8_matmul_with_args_in_float8.backward): the output gradient is cast the same way
//   (NoopFwToFloat8E5M2BwDynamic); grad_input = mm(grad_output_fp8, weight_fp8_t.t()) and grad_weight =
//   mm(grad_output_fp8.t(), input_fp8). float8_ops.py preprocess_addmm makes `a` row-major
//   (`a_data.contiguous()`) and `b` column-major (`b_data.t().contiguous().t()`): weight_fp8_t.t() as b,
//   grad_output_fp8.t() as a and input_fp8 as b are each copied (1 B read + 1 B written per element).
// - enable_fsdp_float8_all_gather (fsdp_utils.py WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather): the
//   weight is cast on each rank's shard before the all-gather, and the gathered weight is already fp8.
Fp8CastBytes torchao_tensorwise_cast_bytes(bool compiled, bool weights_cast_sharded, double shards) {
    const double cast = compiled ? 2.0 + 2.0 + 1.0 : 2.0 + 2.0 + 2.0 + 2.0 + 4.0 + 4.0 + 4.0 + 4.0 + 4.0 + 4.0 + 1.0;
    constexpr double kLayoutCopy = 1.0 + 1.0;
    Fp8CastBytes b;
    b.forward_per_input = cast;
    b.forward_per_weight = weights_cast_sharded ? cast / shards : cast;
    b.backward_per_output = cast + kLayoutCopy;
    b.backward_per_input = kLayoutCopy;
    b.backward_per_weight = kLayoutCopy;
    b.kernels_per_cast = compiled ? 2 : 6;
    return b;
}

namespace {

// One Float8Linear group sharing an input of `in` elements per token: `outs` output elements per token over
// `linears` linears, `weights` weight elements. Compiled, AOTAutograd's common-subexpression pass
// (torch/_functorch/aot_autograd.py: fx_graph_cse when functorch config.cse, the default) merges the identical
// casts of one input (q/k/v, gate/up) into one; eager, each linear casts its input itself.
struct LinearGroup {
    double in = 0, outs = 0, weights = 0, linears = 1;
    double input_cast_share = 1;   // share of the tokens whose input this GPU casts
};

void add_group_casts(LayerWork& w, const WorkContext& c, const Fp8CastBytes& b, const LinearGroup& g,
                     double tokens, bool trains, bool needs_grad) {
    const double input_casts = c.compiled ? 1 : g.linears;
    add_memory_bound(w.forward, c,
                     tokens * g.in * input_casts * g.input_cast_share * b.forward_per_input + g.weights * b.forward_per_weight,
                     (input_casts + g.linears) * b.kernels_per_cast);
    if (!needs_grad) return;
    const double input_copies = trains ? input_casts : 0;   // grad_weight's layout copy of the fp8 input
    const double output_bytes = trains ? b.backward_per_output : b.backward_per_output - 2.0;
    add_memory_bound(w.backward, c,
                     tokens * (g.outs * output_bytes + g.in * input_copies * b.backward_per_input) +
                         g.weights * b.backward_per_weight,
                     g.linears * (b.kernels_per_cast + 1 + (trains ? 1 : 0)) + input_copies);
}

}  // namespace

// Transformer Engine 2.8 (transformer_engine/pytorch), per tensor element:
// - an input quantized by its own kernel (Linear.forward: `inputmat = input_quantizer(inputmat)`): delayed scaling
//   casts with the amax of earlier steps in one pass (read 2 B, write 1 B); current scaling
//   (Float8CurrentScalingQuantizer) first reduces the tensor's amax (read 2 B), then casts (read 2 B, write 1 B).
// - an input quantized by the norm before it (LayerNormLinear, csrc/extensions/normalization.cpp layernorm_fwd):
//   delayed scaling's norm kernel writes fp8 itself (Impl::FULLY_FUSED: no extra pass); current scaling's writes
//   the bf16 norm and its amax (FUSED_NORM_AMAX_FP8) and quantize_with_amax then casts it: write 2 B, read 2 B,
//   write 1 B.
// - GEMMs that take only the TN layout (csrc/quantizer.cpp: `with_transpose = columnwise_usage &&
//   !nvte_is_non_tn_fp8_gemm_supported()`; utils.py is_non_tn_fp8_gemm_supported: compute capability 10.x, 13+)
//   need the wgrad/dgrad operands transposed: one more fp8 write in the same cast kernel (cast_transpose) or, for
//   the norm-fused cast, a transpose pass (read 1 B, write 1 B).
// - the output gradient (Linear backward: grad_output_quantizer, the same cast as an input's, with the transpose
//   where TN-only).
TeFp8CastBytes transformer_engine_cast_bytes(bool current_scaling, bool tn_only) {
    const double amax = current_scaling ? 2.0 : 0.0;
    const double transpose_write = tn_only ? 1.0 : 0.0;
    TeFp8CastBytes b;
    b.own_cast = amax + 2.0 + 1.0 + transpose_write;
    b.norm_fused_cast = (current_scaling ? 2.0 + 2.0 + 1.0 : 0.0) + (tn_only ? (current_scaling ? 1.0 : 2.0) : 0.0);
    b.grad_output_cast = b.own_cast;
    b.kernels_per_own_cast = current_scaling ? 2 : 1;
    b.kernels_per_norm_fused_cast = (current_scaling ? 1 : 0) + (tn_only && !current_scaling ? 1 : 0);
    return b;
}

namespace {

// One dense block's Transformer Engine linears (Megatron-Core's TE spec, megatron/core/models/gpt/
// gpt_layer_specs.py get_gpt_layer_with_transformer_engine_spec): linear_qkv and linear_fc1 are
// TELayerNormColumnParallelLinear (the norm casts their input), linear_proj and linear_fc2 TERowParallelLinear
// (their input, the attention output and the fused SwiGLU's output, is cast by its own kernel).
void add_transformer_engine_block_casts(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens,
                                        bool trains, bool needs_grad) {
    const bool current = c.job.framework.fp8_linear_casts == "te_current";
    const bool tn_only = c.rates.arch == GpuArch::hopper || c.rates.arch == GpuArch::ada;
    const double h = double(l.hidden), q = double(l.q_dim()) / c.tp, kv = double(l.kv_dim()) / c.tp;
    const double i = double(l.ffn_intermediate) / c.tp, up = l.ffn_kind == FfnKind::gated ? 2 : 1;
    // The transposed copies feed only wgrad (its input and output gradient both transposed): a frozen weight's
    // linear casts them row-wise only (Linear: `columnwise=backward_needs_input`, backward_needs_input =
    // is_grad_enabled and weight_requires_grad).
    const TeFp8CastBytes row = transformer_engine_cast_bytes(current, tn_only && trains);
    const double norm_inputs = 2 * h, own_inputs = q + i;
    add_memory_bound(w.forward, c, tokens * (norm_inputs * row.norm_fused_cast + own_inputs * row.own_cast),
                     2 * row.kernels_per_norm_fused_cast + 2 * row.kernels_per_own_cast);
    if (!needs_grad) return;
    const double grad_outputs = (q + 2 * kv) + h + up * i + h;
    add_memory_bound(w.backward, c, tokens * grad_outputs * row.grad_output_cast, 4 * row.kernels_per_own_cast);
}

}  // namespace

void add_fp8_block_casts(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, bool trains,
                         bool needs_grad) {
    if (c.job.spec.train.precision != Precision::fp8) return;
    const std::string& casts = c.job.framework.fp8_linear_casts;
    if ((casts == "te_delayed" || casts == "te_current") && l.experts == 0 && !l.cross_attention)
        return add_transformer_engine_block_casts(w, l, c, tokens, trains, needs_grad);
    if (casts != "torchao_tensorwise") return;
    const ParallelSpec& par = c.job.spec.parallel;
    const bool sharded = c.job.spec.train.fp8_weights && par.zero >= 3 && par.dp > 1;
    const Fp8CastBytes b = torchao_tensorwise_cast_bytes(c.compiled, sharded, double(par.dp));
    const double h = double(l.hidden), q = double(l.q_dim()) / c.tp, kv = double(l.kv_dim()) / c.tp;
    const double i = double(l.ffn_intermediate) / c.tp;
    // Tensor parallel with sequence parallel norms: the column-parallel linears' input is cast on this rank's
    // sequence shard before the all-gather (torchtitan parallelize_llama.py: PrepareFloat8ModuleInput for the
    // attention and feed_forward inputs with Float8ColwiseParallel; torchao/float8/float8_tensor_parallel.py
    // PrepareFloat8ModuleInput: "cast input to fp8 before all-gather").
    const double colwise_share = par.tp > 1 && par.sequence_parallel ? 1 / c.tp : 1;
    const double attention_sets = l.cross_attention ? 2 : 1;
    for (int s = 0; s < int(attention_sets); ++s) {
        add_group_casts(w, c, b, {h, q + 2 * kv, h * (q + 2 * kv), 3, colwise_share}, tokens, trains, needs_grad);
        add_group_casts(w, c, b, {q, h, q * h, 1}, tokens, trains, needs_grad);
    }
    // Routed experts hold grouped weight tensors, not nn.Linear modules: convert_to_float8_training swaps nn.Linear.
    if (l.experts > 0) return;
    const double up = l.ffn_kind == FfnKind::gated ? 2 : 1;
    add_group_casts(w, c, b, {h, up * i, up * h * i, up, colwise_share}, tokens, trains, needs_grad);
    add_group_casts(w, c, b, {i, h, i * h, 1}, tokens, trains, needs_grad);
}

}  // namespace ftb
