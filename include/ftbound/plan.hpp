// A plan: everything ftbound predicts for one job. Built by make_plan(); printed by src/report/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "ops/operations.hpp"
#include "ops/recommendations.hpp"

namespace ftb {

// One change to the job, re-planned.
struct Change {
    std::string what;                 // e.g. "activation_checkpointing: full"
    std::vector<std::string> set;     // the --set assignments that make it
    MemoryResult memory;              // the job's memory with the change
};

struct PlanOptions {
    bool limits = true;               // max micro-batch / max seq len (bisection)
    bool fit_advice = true;           // when it does not fit: changes that make it fit
    bool weak_points = true;          // re-schedule with each resource 2x better
    bool recommendations = true;      // concrete changes, each re-planned
};

struct Plan {
    MemoryResult memory;
    MemoryWalk memory_walk;           // memory through the step at the peak's pipeline stage (for reports)
    double typical_step_allocated_peak_bytes = 0;   // typical_step_allocated_peak_bytes(job, memory)
    int64_t max_micro_batch = 0;
    int64_t max_seq_len = 0;
    std::vector<Change> fixes;        // changes that make a non-fitting job fit, least disruptive first
    TimeResult time;
    std::vector<WeakPoint> weak_points;
    OperationsResult ops;
    std::vector<Recommendation> recommendations;   // re-planned changes that fit and speed the step up
    std::vector<std::string> accuracy_notes;       // where the job is outside what validation/ measured
};

Plan make_plan(const Job& job, const PlanOptions& options = {});

// Changes that make the job fit (each re-planned; only those that fit are returned).
std::vector<Change> changes_that_fit(const Job& job, size_t max_results = 5);

}  // namespace ftb
