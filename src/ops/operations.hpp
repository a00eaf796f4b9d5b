// The plan's operations section: power against the supplies, the storage path (checkpoints written and
// restored, training data read), reliability and checkpoints, energy and cost for the whole job (issue
// "Operations"; DESIGN.md §5).
#pragma once
#include <optional>
#include <string>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/price.hpp"
#include "ftbound/storage.hpp"
#include "ftbound/timing.hpp"
#include "ops/energy_cost.hpp"
#include "ops/power.hpp"
#include "ops/reliability.hpp"

namespace ftb {

// Training data read from storage per step; the data loader reads ahead under the step, so only what does
// not fit in a step shows.
struct DataRead {
    double bytes_per_node_per_step = 0;
    double seconds_per_step = 0;        // at the tier's per-node rate shared by all nodes
    double exposed_seconds_per_step = 0;
};

struct OperationsResult {
    PowerDraw power;
    ReliabilityResult reliability;
    CheckpointWrite checkpoint;
    CheckpointWrite restore;             // reading the checkpoint back after a failure
    StorageTier checkpoint_storage;
    StorageTier data_storage;
    DataRead data_read;
    std::string storage_note;            // e.g. a multi-node job checkpointing to node-local drives only
    std::optional<NodePrice> price;      // the node-hour price used (empty: none known)
    EnergyCost energy;
    bool has_job_length = false;     // data.tokens given: job-level figures are meaningful
    double job_seconds = 0;          // failure-free training time
    bool restart_from_job = false;   // restart time given in ops.restart_seconds
};

// `storage_speedup`: storage made this many times faster (weak-point analysis; 1 = as is).
OperationsResult plan_operations(const Job& job, const MemoryResult& memory, const TimeResult& time,
                                 double storage_speedup = 1.0);

}  // namespace ftb
