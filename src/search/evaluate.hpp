// Planning one configuration for the search: the memory walk first (about five times cheaper than the step
// schedule); the step schedule, energy and cost only for configurations that fit.
#pragma once
#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "memory/device_memory.hpp"
#include "search/candidate.hpp"

namespace ftb {

// Does the plan's memory count as fitting for the search? The verdict `fits` (the whole uncertainty band below
// the capacity), or also `tight` with `allow_tight`; and the host RAM holds what is offloaded.
bool fits_for_search(const MemoryResult& m, bool allow_tight);

// A necessary condition for fits_for_search on the GPU that grows worse with device_used_bytes alone (the
// verdict does not: its band depends on what the peak is made of), for the walk's monotone stops:
// `fits` needs the band's top below the capacity, so device_used below it; `tight` needs the band's bottom at
// most the capacity, and the band is never wider than kMaxBandFraction of the figure.
bool could_fit_on_device(const MemoryResult& m, bool allow_tight);
// The band is never wider than kMaxBandHalfWidth of the figure (memory/device_memory.hpp);
// tests/unit/search_dominance_test.cpp checks it.
inline constexpr double kMaxBandFraction = kMaxBandHalfWidth;

// The memory figures of a configuration (fits, device and host use); time, cost and energy stay 0.
Metrics memory_metrics(const Job& job, const MemoryResult& m, bool allow_tight);

// Everything ranked: step time, time to train (or per step), GPU-hours, cost, energy.
Metrics full_metrics(const Job& job, const MemoryResult& m, bool allow_tight);

}  // namespace ftb
