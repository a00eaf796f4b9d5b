// What one pipeline stage stores: which blocks it holds and how many of their parameters train, stay
// frozen or are stored quantised, on one GPU after tensor and expert parallelism (before ZeRO).
#pragma once
#include <cstdint>

#include "ftbound/job.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

struct StageSplit {
    int64_t first = 0, last = 0;   // block index range [first, last)
    bool has_embedding = false, has_head = false;
    int64_t blocks() const { return last - first; }
};

// Megatron's even split of `layers` blocks over `pp` stages; the first stages take the remainder.
// `edges_as_layers`: the embedding and the head + loss each count as one more layer to split (Megatron-LM
// account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split: "Increase the number of layers by
// one if we include the embedding (loss) layer", megatron/core/transformer/transformer_block.py; Llama 3 "we reduce one Transformer layer each from the first and the last stages",
// arXiv 2407.21783 §3.3.2), so the first and the last stage hold one block fewer.
StageSplit stage_split(int64_t layers, int64_t pp, int64_t stage, bool edges_as_layers = false);

// Block `li` holds and saves what block `li - 1` does: the same LayerSpec in the same role (trained, frozen or
// outside train.blocks, backward through it or not). stage_params and stage_activations count such a run once.
bool same_block_as_previous(const Job& job, const TrainingSetup& set, int64_t li);

struct StageParams {
    double trainable = 0;          // trainable parameters stored on this GPU (after TP/EP/PP, before ZeRO)
    double frozen = 0;             // frozen, kept in the compute dtype
    double quantised = 0;          // frozen base linears stored quantised (QLoRA)
    // Parameters that require a gradient but never receive one (ModelSpec::idle_layers and their adapters without
    // ZeRO or FSDP): stored like the trainable ones, with no gradient and no optimizer state.
    double held = 0;
    double linear_weights = 0;     // parameters read by matmuls (for autocast copies)
    double largest_layer = 0;      // largest block's parameters on this GPU (ZeRO-3 gather unit)
    double largest_layer_quantised = 0;   // of those, stored quantised (gathered as stored)
    double largest_quantised = 0;  // largest quantised weight matrix (QLoRA dequantisation buffer)
    double adafactor_state = 0;    // factored second-moment elements
    double blocks = 0;             // all block parameters on this GPU (FSDP units)
    double largest_trainable_matrix = 0;   // elements of the largest trainable tensor (a for-loop optimizer step)
    double head_matrix = 0;        // the output head's weight when it trains on this stage (its gradient comes first)
    double head_weights = 0;       // the output head's weight on this stage, trainable or not (unquantised)
    bool head_tied = false;        // ... and is the embedding matrix on this same stage (tie_word_embeddings)
};

// `unsharded`: count as if tp = ep = 1 (the whole model's trainable parameters, for the report).
StageParams stage_params(const Job& job, const TrainingSetup& set, const StageSplit& split, bool unsharded = false);

}  // namespace ftb
