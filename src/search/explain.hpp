// "Why this configuration wins over the next": the margin on the objective, what differs between the two
// (as job-file changes) and the resource whose time moved most between their step schedules.
#pragma once
#include <string>

#include "ftbound/timing.hpp"
#include "search/candidate.hpp"

namespace ftb {

struct Explained {
    const Candidate& candidate;
    const TimeResult& time;          // the planned step (its breakdown by resource)
    const std::string& system;       // server name
};

// One sentence: e.g. "1.18x faster than #3 (parallel.pp 8 instead of 16): 1.2 s less pipeline_bubble per step".
std::string reason_over(const Explained& winner, const Explained& next, int next_rank, Objective objective);

}  // namespace ftb
