// The walk through one training step of one pipeline stage: end of forward, the loss, backward block by
// block from the top, and the optimizer step. Each point sums what is live; the peak is the largest.
// Reports also get forward block by block (each point below the end of forward).
#pragma once
#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "memory/loss_memory.hpp"
#include "memory/model_state.hpp"
#include "memory/stage_activations.hpp"

namespace ftb {

// Transient buffers that exist only inside one op (independent of what is saved).
struct Workspaces {
    double forward = 0;    // the largest forward intermediate (FFN product, eager attention scores)
    double backward = 0;   // gradients of one block's internals and of the residual stream
    double cublas = 0;     // cuBLAS workspace from the caching allocator
};

Workspaces stage_workspaces(const Job& job, const TrainingSetup& set, const StageSplit& split);

// Everything live on one stage, by kind.
struct StageMemory {
    StageParams params;
    WeightBytes weights;
    GradientBytes grads;
    OptimizerBytes optimizer;
    StageActivations activations;
    LossMemory loss;
    Workspaces work;
    bool has_head = false;
    int64_t first_block = 0;   // index of the stage's first block in the model
};

struct PhasePeak {
    double total = -1;
    MemoryBreakdown parts;
    MemoryPhase phase = MemoryPhase::forward;
    // The compute stream's reservation: its largest live sum (what lives in other streams' pools left out) plus the
    // holes its allocation order leaves (the loss's); and what the collectives' streams hold at their own peaks.
    double compute_stream_peak = -1;
    double side_stream_pools = 0;
};

// The peak of the walk; with `points`, also every point of it in execution order (for reports).
PhasePeak walk_step(const Job& job, const StageMemory& s, std::vector<MemoryWalkPoint>* points = nullptr);

}  // namespace ftb
