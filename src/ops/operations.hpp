// The plan's operations section: power against the supplies, reliability and checkpoints, energy and cost
// for the whole job (issue "Operations"; DESIGN.md §5).
#pragma once
#include <optional>
#include <string>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "ops/energy_cost.hpp"
#include "ops/power.hpp"
#include "ops/reliability.hpp"

namespace ftb {

struct OperationsResult {
    PowerDraw power;
    ReliabilityResult reliability;
    CheckpointWrite checkpoint;
    EnergyCost energy;
    bool has_job_length = false;     // data.tokens given: job-level figures are meaningful
    double job_seconds = 0;          // failure-free training time
    bool restart_from_job = false;   // restart time given in ops.restart_seconds
};

OperationsResult plan_operations(const Job& job, const MemoryResult& memory, const TimeResult& time);

}  // namespace ftb
