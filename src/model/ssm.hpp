// A state-space mixer's work beyond its linears, per token: the depthwise causal convolution and the scan, as the
// fused kernels the training paths call compute them (mamba_ssm's causal_conv1d_fn, selective_scan_fn and
// mamba_chunk_scan_combined; transformers' MambaMixer / Mamba2Mixer.cuda_kernels_forward call the same ones; the
// Gated DeltaNet of Qwen3-Next and Qwen3.5 calls flash-linear-attention's chunk_gated_delta_rule, LFM2's short
// convolution causal-conv1d's causal_conv1d_fn).
#pragma once
#include "ftbound/model_spec.hpp"

namespace ftb {

struct SsmCoreFlops {
    double conv = 0;          // 2 K FLOPs per channel of the convolution
    double scan = 0;          // the recurrence (mamba1), the SSD chunk products (mamba2), the chunked delta rule
                              // (gated_delta) or the two gating products (short_conv)
    double total() const { return conv + scan; }
};

// Forward FLOPs per token of the block's state-space core over a sequence of `seq` tokens (zero without one). The
// backward computes twice these (each product has two operands to differentiate).
SsmCoreFlops ssm_core_forward_flops(const LayerSpec& l, double seq);

// The mamba2 SSD chunk length a sequence of `seq` tokens runs with (the chunk, or the whole sequence when shorter).
double ssd_chunk(const LayerSpec& l, double seq);

// The chunk of flash-linear-attention's chunk_gated_delta_rule (fla/ops/gated_delta_rule/chunk.py
// chunk_gated_delta_rule_fwd, commit 0315a70e: chunk_local_cumsum(g, chunk_size=64), and the 64-row blocks of
// chunk_scaled_dot_kkt_fwd and solve_tril), or the whole sequence when shorter.
double delta_rule_chunk(double seq);

}  // namespace ftb
