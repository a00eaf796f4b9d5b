// Weak points to actions: concrete changes to the job, each re-planned (memory and step time); only
// changes that fit and make the step faster are kept (issue "Operations" #1).
#pragma once
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"

namespace ftb {

struct Recommendation {
    Resource addresses = Resource::compute;   // the weak point it relieves
    std::string what;
    std::vector<std::string> set;             // --set assignments (or "hardware.system=..." for another server)
    bool changes_training = false;            // alters the optimisation (batch, precision, method), not just speed
    double device_used_bytes = 0;
    double step_seconds = 0;
    double speedup = 1;                       // old step / new step
    double tokens_per_second = 0;
};

std::vector<Recommendation> recommend(const Job& job, const MemoryResult& memory, const TimeResult& time,
                                      size_t max_results = 6);

}  // namespace ftb
