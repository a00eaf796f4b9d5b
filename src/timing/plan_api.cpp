// The prediction diagnose sets beside a measured trace (include/ftbound/plan_api.hpp).
#include "ftbound/plan_api.hpp"

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "spec/job_file.hpp"

namespace ftb {

PredictedStep predict_step_for_job_file(const std::string& job_path, const std::vector<std::string>& overrides) {
    const Job job = load_job(job_path, overrides);
    const MemoryResult mem = plan_memory(job);
    const TimeResult t = plan_time(job, mem);
    PredictedStep p;
    p.step_seconds = t.step_seconds;
    for (const auto& ph : t.breakdown) p.breakdown.push_back({ph.phase, ph.seconds, to_string(ph.resource)});
    p.bottleneck = to_string(t.bottleneck);
    return p;
}

}  // namespace ftb
