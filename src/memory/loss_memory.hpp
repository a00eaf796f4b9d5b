// The logits and the loss on the last pipeline stage: bytes at their peak (the start of the loss backward)
// and what the training loop holds through backward, per implementation (standard, fp32 upcast, chunked, fused).
#pragma once
#include "ftbound/job.hpp"
#include "memory/stage_params.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

struct LossMemory {
    double peak = 0;   // bytes at the loss peak
    double held = 0;   // bytes held through backward (the logits the loop keeps)
    double grad = 0;   // the logits' gradient when the head's backward starts (after the cross-entropy's)
    // What the caching allocator maps for these tensors (>= peak): a freed tensor too small for the next one
    // leaves a hole the later ones cannot use (memory/device_segment.hpp).
    double reserved = 0;
};

// Zero on stages without the head.
LossMemory loss_memory(const Job& job, const TrainingSetup& set, const StageSplit& split);

}  // namespace ftb
