// A collective running beside compute takes SMs and HBM bandwidth from it (NCCL's CTAs hold their SMs; its
// traffic crosses HBM): the seconds the compute stream loses while a collective overlaps it.
#pragma once
#include "timing/scheduler.hpp"

namespace ftb {

// Adds to the ledger the compute time lost while `overlapped_s` of collective `cost` on group `g` runs beside it.
void add_overlap_slowdown(Schedule& s, const ScheduleInputs& in, const CommGroup& g, const CollectiveCost& cost,
                          double overlapped_s);

}  // namespace ftb
