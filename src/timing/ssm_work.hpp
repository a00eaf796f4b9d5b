// A block's state-space core (LayerSpec::ssm): the depthwise causal convolution and the scan, as the fused kernels
// of mamba_ssm and causal-conv1d run them in training (transformers' MambaMixer / Mamba2Mixer and the hybrids' copies
// call mamba_inner_fn and mamba_split_conv1d_scan_combined when the kernels are installed, which axolotl's Mamba,
// Jamba, Falcon-H1, Granite 4 and Nemotron-H examples require); Gated DeltaNet (Qwen3-Next, Qwen3.5) as
// flash-linear-attention's chunk_gated_delta_rule and causal-conv1d run it, LFM2's short convolution as causal_conv1d_fn
// with its two gating products. The linears around it are the work builder's.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Adds the convolution and scan of the block's mixer for `tokens` tokens per GPU over sequences `seq` long (forward,
// and backward when the input needs a gradient); nothing without a state-space mixer.
void add_ssm_core(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq, bool needs_grad);

}  // namespace ftb
