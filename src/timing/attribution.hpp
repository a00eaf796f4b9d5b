// Attribution: a scheduled step (scheduler.hpp) turned into the contract's step figures: every second on one
// resource, compute that ran under a longer transfer moved to that transfer, the bottleneck, throughput and
// utilisation, and the weak points (each resource made twice as fast, re-planned).
#pragma once
#include <array>
#include <vector>

#include "ftbound/timing.hpp"
#include "timing/scheduler.hpp"

namespace ftb {

// Seconds the GPU's compute and memory streams were busy, before any re-attribution.
struct StreamBusy {
    double compute_s = 0, memory_s = 0, total_s = 0;
};
StreamBusy stream_busy(const std::vector<StepPhase>& phases);

// Moves compute-stream seconds that ran under a longer transfer (`rebound_s`, per transfer resource) to that
// transfer's resource, taking them from the compute and memory-bound phases in proportion.
void attribute_hidden_compute(Ledger& ledger, const std::array<double, kResourceCount>& rebound_s);

// step_seconds, breakdown (largest first), bottleneck and its share.
void set_step_totals(TimeResult& res, std::vector<StepPhase> phases);

// FLOPs of one optimizer step for the utilisation figures.
struct StepFlops {
    double model = 0;      // what the method needs (whole job)
    double model_6n = 0;   // the pre-training convention (whole job)
    double hardware = 0;   // what the kernels execute (whole job)
};
// Every stage but the last is like the first (embedding lookups do no FLOPs); each GPU of a TP/CP group does
// its share; every DP replica does the same.
double hardware_flops_per_step(const ParallelSpec& par, const StageWork& stage, double grad_accumulation);

// Dense peak of the device in the job's precision, FLOP/s.
double peak_flops(const DeviceSpec& dev, Precision p);

// Whole optimizer steps to train data.tokens x data.epochs: ceil(tokens / tokens per step), at least one (a last,
// partial batch still runs as a step), so a job is never shorter than one step; 0 without data.tokens.
double steps_to_train(const JobSpec& spec, double tokens_per_step);

// tokens/s, per GPU, MFU, HFU and time to train (whole steps), from the step time and FLOPs.
void set_throughput(TimeResult& res, const Job& job, double real_tokens_per_seq, const StepFlops& flops);

}  // namespace ftb
