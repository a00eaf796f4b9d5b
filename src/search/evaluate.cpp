#include "search/evaluate.hpp"

#include "ftbound/timing.hpp"
#include "ops/operations.hpp"

namespace ftb {

bool fits_for_search(const MemoryResult& m, bool allow_tight) {
    const bool device = m.verdict == MemoryVerdict::fits || (allow_tight && m.verdict == MemoryVerdict::tight);
    return device && m.host_fits;
}

bool could_fit_on_device(const MemoryResult& m, bool allow_tight) {
    return allow_tight ? m.device_used_bytes * (1 - kMaxBandFraction) <= m.capacity_bytes
                       : m.device_used_bytes < m.capacity_bytes;
}

Metrics memory_metrics(const Job& job, const MemoryResult& m, bool allow_tight) {
    Metrics x;
    x.device_used_bytes = m.device_used_bytes;
    x.capacity_bytes = m.capacity_bytes;
    x.host_bytes = m.host_bytes;
    x.host_capacity_bytes = m.host_capacity_bytes;
    x.gpus = job.system.total_devices();
    x.fits = fits_for_search(m, allow_tight);
    return x;
}

Metrics full_metrics(const Job& job, const MemoryResult& m, bool allow_tight) {
    Metrics x = memory_metrics(job, m, allow_tight);
    const TimeResult t = plan_time(job, m);
    const OperationsResult ops = plan_operations(job, m, t);
    x.step_seconds = t.step_seconds;
    x.tokens_per_second = t.tokens_per_second;
    // With data.tokens: the whole job; without: one optimizer step (the same global batch everywhere).
    x.time_seconds = t.time_to_train_seconds.value_or(t.step_seconds);
    x.gpu_hours = double(x.gpus) * x.time_seconds / 3600.0;
    x.cost = ops.energy.total_cost;
    x.energy_kwh = ops.energy.energy_kwh;
    return x;
}

}  // namespace ftb
