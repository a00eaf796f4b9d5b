// torchao Float8Linear's own kernels (framework time.fp8_linear_casts: torchao_tensorwise, precision fp8): with
// dynamic tensorwise scaling every fp8 GEMM operand is made by an amax reduction and a cast from bf16, and the
// backward GEMMs copy two of their fp8 operands into the layout torch._scaled_mm takes. All memory-bound.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Bytes one Float8Linear's casts move, per element of its input [tokens x in], its output gradient
// [tokens x out] and its weight [out x in].
struct Fp8CastBytes {
    double forward_per_input = 0, forward_per_weight = 0;
    double backward_per_output = 0, backward_per_input = 0, backward_per_weight = 0;
    double kernels_per_cast = 0;   // kernels of one cast (amax reduction + cast)
};
// `compiled`: Inductor fuses each cast's pointwise ops into one kernel; `weights_cast_sharded`: the fp8 FSDP
// all-gather casts each rank's shard (1/`shards` of the weight) before the gather, not the gathered weight.
Fp8CastBytes torchao_tensorwise_cast_bytes(bool compiled, bool weights_cast_sharded, double shards);

// Bytes Transformer Engine's fp8 quantization moves per element (framework time.fp8_linear_casts te_delayed /
// te_current): an input cast by its own kernel, one cast by the norm before it (beyond the norm's own bytes), an
// output gradient; `tn_only`: the GPU's fp8 GEMMs take only the TN layout (Hopper, Ada), so wgrad/dgrad operands
// are also written transposed.
struct TeFp8CastBytes {
    double own_cast = 0, norm_fused_cast = 0, grad_output_cast = 0;
    double kernels_per_own_cast = 0, kernels_per_norm_fused_cast = 0;
};
TeFp8CastBytes transformer_engine_cast_bytes(bool current_scaling, bool tn_only);

// The casts of one block's Float8Linears (torchao) or Transformer Engine linears (its q/k/v, o and FFN projections; torchtitan leaves the output head in
// bf16), for `tokens` tokens per GPU.
void add_fp8_block_casts(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, bool trains,
                         bool needs_grad);

}  // namespace ftb
