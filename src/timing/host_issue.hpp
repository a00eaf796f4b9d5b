// The host's side of one micro-batch of a pipeline stage: issuing its kernels (op by op from Python when the blocks
// run eagerly, eager_host.hpp), the framework's per-block and per-FSDP-unit Python, and the micro-batch as the stream
// sees it (the kernels, or the host when it is slower).
#pragma once
#include "timing/work_builder.hpp"

namespace ftb {

// Host time to issue one kernel (launch + the framework's per-kernel Python work).
double host_seconds_per_kernel(const Job& job, const ResourceScale& scale);

// Forward passes a block's Python runs again in backward: 1 under full or per-op recompute (a share of it when only
// recompute_layers blocks of a stage recompute), else 0.
double forward_reruns_per_block(const Job& job);

// Fills `s`'s host time and the phases' wall time as the stream sees them, for `blocks` blocks and `grad_tensors`
// tensors given a gradient, from the kernels already in `s`.
void add_host_issue(StageWork& s, const WorkContext& c, double blocks, double grad_tensors);

}  // namespace ftb
