// FSDP2 (torch fully_shard) copies that run on the compute stream, per unit: the all-gather's copy-out into the
// parameters and the gradients' copy-in to the reduce-scatter buffer, cast to the reduce dtype.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Whether the job's units are FSDP2's (a profile that runs fully_shard) sharded over more than one rank.
bool fsdp2_unit_copies(const WorkContext& c);
// Adds one unit's copies per micro-batch: `elements` parameters of the unit on this GPU, `syncs_gradients` when
// the unit's weights train (its gradients are reduce-scattered).
void add_fsdp2_unit_copies(Work& fwd, Work& bwd, const WorkContext& c, double elements, bool syncs_gradients);

}  // namespace ftb
