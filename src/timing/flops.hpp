// FLOPs per token for the utilisation figures (CONTRACT.md throughput.mfu, mfu_6n, hfu).
//  - method: what the training method needs, counted on the same matmul shapes the work builder runs: the forward
//    of every block and the head; input gradients of every block from the top down to the lowest one that trains
//    (LoRA: every adapted block); weight gradients of the weights that train (LoRA: the adapters only); attention
//    as the kernels compute it (causal: half the score matrix; backward twice the forward). No recompute: the
//    hardware FLOPs (work_builder.hpp) add recompute, FlashAttention's backward recompute of the scores and
//    QLoRA's dequantisation, so hardware >= method on every plan.
//  - 6N: the pre-training convention (PaLM appendix B; Korthikanti et al. 2022): 6 per matmul weight per token plus
//    12 * q_dim * sequence per block, for comparison with published MFUs.
#pragma once
#include "ftbound/job.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

// Method FLOPs per real token of a sequence `seq` tokens long (whole model, all tensor-parallel ranks together).
double method_flops_per_token(const Job& job, const TrainingSetup& set, double seq);
// 6 * matmul weights + 12 * q_dim * keys per block, per token.
double six_n_flops_per_token(const ModelSpec& m, double seq);

}  // namespace ftb
