// `ftbound search`: the fastest (or cheapest, or least energy) way to run one fine-tuning job. The model,
// method, data, global batch and precision policy stay; the layout (and optionally the hardware) is searched.
// Pure: the systems come resolved from the catalog before the search starts (no I/O, no global state inside),
// and the result is identical for any number of threads. See docs/search.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/framework_support.hpp"
#include "ftbound/job.hpp"
#include "search/candidate.hpp"
#include "search/layout.hpp"

namespace ftb {

// A server the search may use, resolved before the search (the job-local catalog).
struct SearchSystem {
    std::string name;      // catalog name, or the job's own description of its hardware
    SystemSpec spec;       // `nodes` is set per configuration
    bool is_job_system = false;
};

// Changes that alter the training itself, tried only when the user allows them.
struct AllowedChanges {
    bool fp8 = false;          // precision fp8 where the GPU and framework have it
    bool lora = false;         // full fine-tuning -> LoRA
    bool qlora = false;        // full or LoRA -> QLoRA (4-bit base weights)
    bool adamw_8bit = false;   // AdamW -> 8-bit AdamW states
};

struct SearchRequest {
    std::vector<SearchSystem> systems;     // at least one; the job's own system first when searched
    std::vector<int> nodes;                // node counts to try; empty = the job's node count
    int64_t max_gpus = 0;                  // 0 = no limit
    Objective objective = Objective::time;
    std::optional<double> deadline_seconds;   // time_to_train_seconds must not exceed it
    std::optional<double> budget;             // cost must not exceed it
    bool allow_tight = false;
    AllowedChanges allow;
    FrameworkSupport support;
    size_t top = 5;
    unsigned threads = 1;
    // Called from the calling thread about ten times a second while the search runs: units done, units in all.
    std::function<void(size_t, size_t)> progress;
};

// When nothing is feasible: the constraint that removed the last configurations and the one that came closest.
struct BoundBy {
    std::string constraint;                // memory | deadline | budget | max_gpus | layout
    std::string reason;                    // one sentence with the numbers
    std::optional<Candidate> nearest;
};

struct SearchResult {
    Layout job_layout;                     // the job as written (system 0 when it is the job's own)
    std::optional<Candidate> baseline;     // the job as written, planned (empty when its system is not searched)
    int64_t evaluated = 0;                 // configurations planned (memory walk at least)
    int64_t timed = 0;                     // of those, how many fit in memory and got a step-time plan
    int64_t feasible = 0;                  // fit and meet the deadline and budget
    int64_t meshes = 0;                    // parallel meshes (system, nodes, tp, pp, cp, dp, ep) in the space
    std::vector<Candidate> top;            // best first; up to request.top + 1 (the extra explains the last)
    std::vector<Candidate> front;          // Pareto front of time vs cost (or GPU-hours) vs energy, fastest first
    std::optional<BoundBy> bound_by;       // set when feasible == 0
    bool cost_known = false;               // a price was given: the front's second axis is cost, else GPU-hours
    bool time_per_job = false;             // data.tokens given: figures for the whole job, else per optimizer step
};

SearchResult run_search(const Job& job, const SearchRequest& request);

}  // namespace ftb
