// Saved activations of one pipeline stage on one GPU: each block's saved tensors (activations.cpp) after
// tensor/sequence/context parallelism and recompute, the head's inputs, the micro-batches the pipeline
// schedule keeps in flight, and what activation offload moves to host memory.
#pragma once
#include <vector>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "memory/stage_params.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

struct StageActivations {
    std::vector<double> per_block;     // saved bytes of each block of this stage, one micro-batch, bottom first
    double resident = 0;               // all saved bytes on the GPU at the end of forward (all in-flight micro-batches)
    double scores_resident = 0;        // the part of `resident` that is eager attention's score-sized tensors
    double recompute_work = 0;         // full recompute: one block's rebuilt activations during its backward
    double host = 0;                   // offloaded to host memory
    double in_flight = 1;              // micro-batches whose activations this stage holds (pipeline schedule)
    bool offloaded = false;            // saved tensors live on the host; the GPU keeps a fixed double buffer
    LayerActivationBytes first_block_per_token;
};

StageActivations stage_activations(const Job& job, const TrainingSetup& set, const StageSplit& split, int64_t stage);

// Micro-batches whose activations pipeline stage `stage` holds at once (1 without pipelining).
double in_flight_micro_batches(const ParallelSpec& par, int64_t grad_accumulation, int64_t stage);

// Interleaved 1F1B (Megatron-LM's schedule): the most saved bytes pipeline rank `rank` holds at once, given one
// micro-batch's saved bytes per model chunk of that rank (chunk 0 first) and `grad_accumulation` micro-batches.
double interleaved_resident_bytes(const std::vector<double>& chunk_bytes, int64_t pp, int64_t rank,
                                  int64_t grad_accumulation);

}  // namespace ftb
