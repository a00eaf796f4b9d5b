// Activations saved for backward, per token of one block, counted per op the way autograd keeps
// them. Elementwise ops save an input only when the gradient of another input needs it; a linear layer saves
// its input only when its weight trains (or a quantised kernel keeps it: FrameworkProfile::quantized_linear_saves_input;
// or DeepSpeed ZeRO-3 before 0.9 replaced F.linear: FrameworkProfile::zero3_linear_saves_input).
#pragma once
#include "ftbound/memory.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

struct LayerActivation {
    LayerActivationBytes per_token;   // all saved tensors, per token, before any sharding
    double tp_sharded_per_token = 0;  // the part inside tensor-parallel regions (÷ tp)
    double layer_input_per_token = 0; // what full recompute keeps: the block's input
    double scores_per_token = 0;      // eager attention's score-sized tensors (dropped by selective recompute)
    double per_block_bytes = 0;       // saved tensors that do not grow with the tokens (OFT's rotation blocks)
};

// `trainable_weights`: this block's own weights train (full / freeze); `needs_grad`: backward runs
// through this block at all. `seq_len` sizes eager attention scores.
LayerActivation layer_activation(const LayerSpec& layer, const ModelSpec& model, const Job& job,
                                 const TrainingSetup& setup, bool trainable_weights, bool needs_grad, int64_t seq_len);

// Saved bytes of one norm, per token.
double norm_saved_per_token(const ModelSpec& model, const Job& job, const TrainingSetup& setup, bool weight_trainable);

}  // namespace ftb
