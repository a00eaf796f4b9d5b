// The step model's entry for callers that re-plan one job many times (weak points): the communication
// groups walk the topology, so they are built once and passed in.
#pragma once
#include "ftbound/timing.hpp"
#include "timing/scheduler.hpp"

namespace ftb {

TimeResult plan_time_with_groups(const Job& job, const MemoryResult& memory, const ResourceScale& scale,
                                 const CommGroups& groups);

}  // namespace ftb
