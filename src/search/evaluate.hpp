// Planning one configuration for the search: the memory walk first (about five times cheaper than the step
// schedule); the step schedule, energy and cost only for configurations that fit.
#pragma once
#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "search/candidate.hpp"

namespace ftb {

// Does the plan's memory count as fitting for the search (GPU and host)? `allow_tight` admits a capacity
// inside the memory model's uncertainty band.
bool fits_for_search(const MemoryResult& m, bool allow_tight);
// The GPU part of that alone (host RAM grows with offload while GPU memory falls).
bool fits_on_device(const MemoryResult& m, bool allow_tight);

// The memory figures of a configuration (fits, device and host use); time, cost and energy stay 0.
Metrics memory_metrics(const Job& job, const MemoryResult& m, bool allow_tight);

// Everything ranked: step time, time to train (or per step), GPU-hours, cost, energy.
Metrics full_metrics(const Job& job, const MemoryResult& m, bool allow_tight);

}  // namespace ftb
