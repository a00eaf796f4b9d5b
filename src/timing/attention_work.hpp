// The attention core of a block: fused kernels (FlashAttention 1-3, cuDNN) at their measured efficiency (and below it
// at short sequences), or eager attention's batched GEMMs and materialised softmax.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Fraction of the dense peak the fused attention kernel reaches on this architecture, forward or backward.
double attention_efficiency(GpuArch arch, AttentionKernel kernel, bool backward = false);
// FlashAttention backward executes 2.5x the forward FLOPs (5 matmuls against 2, Dao 2023 §3).
inline constexpr double kAttentionBackwardFlopsFactor = 2.5;

// Adds the block's attention core (forward, and backward when the input needs a gradient) for `tokens` queries per
// GPU over sequences `seq` long; returns its forward FLOPs (selective recompute repeats them).
double add_attention_core(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq,
                          bool needs_grad);

}  // namespace ftb
