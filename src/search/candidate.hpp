// One evaluated configuration and the figures the search ranks it by, plus the orders it is ranked in:
// by one objective, and by Pareto dominance over time, cost (or GPU-hours) and energy.
#pragma once
#include <optional>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "search/layout.hpp"

namespace ftb {

enum class Objective { time, cost, energy };
const char* to_string(Objective o);

// Whole-job figures when the job states data.tokens, else per optimizer step (the global batch is the same
// for every configuration, so per-step figures rank configurations the same way as whole-job ones).
struct Metrics {
    double step_seconds = 0;
    double tokens_per_second = 0;
    double time_seconds = 0;               // time to train (or one step)
    double gpu_hours = 0;                  // GPUs x time
    std::optional<double> cost;            // compute + energy cost, when a price is known
    double energy_kwh = 0;                 // at the meter
    double device_used_bytes = 0;
    double capacity_bytes = 0;
    double host_bytes = 0;
    double host_capacity_bytes = 0;
    int64_t gpus = 0;
    bool fits = false;                     // within GPU and host memory (verdict fits, or tight when allowed)
};

struct Candidate {
    Layout layout;
    Metrics metrics;
};

// The value ranked by `o` (cost falls back to GPU-hours when no price is known).
double objective_value(const Metrics& m, Objective o);
// Strict total order for ranking by `o`: the objective, then the other two, then the layout.
bool better(const Candidate& a, const Candidate& b, Objective o);
// a dominates b: no worse in time, cost (or GPU-hours) and energy, and better in one (ties: the layout order).
bool dominates(const Candidate& a, const Candidate& b);
// How far a configuration that does not fit is from fitting: needed / available, the larger of GPU and host.
double memory_overshoot(const Metrics& m);

}  // namespace ftb
