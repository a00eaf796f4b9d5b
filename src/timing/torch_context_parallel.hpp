// PyTorch's own context parallelism (torch.distributed.tensor.experimental.context_parallel, the one torchtitan
// runs): the pass-KV ring. Per block, each rank runs one sub-SDPA per CP rank on its local queries, k and v of
// the whole sequence come from one all-gather issued beside the first (local) sub-SDPA, the partial outputs are
// merged in fp32, and the backward passes dk/dv around the ring in fp32, one hop per sub-SDPA.
#pragma once
#include <cstdint>

#include "timing/scheduler.hpp"

namespace ftb {

// One block, one micro-batch, one rank.
struct PassKvTraffic {
    double kv_gathered_bytes = 0;     // the all-gather's output: k and v of the whole sequence
    double dkv_hop_bytes = 0;         // one ring hop: the local shard's dk and dv in fp32
    double forward_merge_bytes = 0;   // HBM bytes merging the partial outputs, one forward pass
    double backward_merge_bytes = 0;  // HBM bytes accumulating dq, dk, dv, one backward
};
// `q_width` / `kv_width`: elements per token of q and of k (each of k and v) as the SDPA sees them on one rank.
PassKvTraffic pass_kv_traffic(double tokens_per_gpu, double q_width, double kv_width, int64_t cp, double act_bytes,
                              bool compiled);

// Seconds of one block's exchange the compute stream waits for (exposed) and runs beside (overlapped).
struct PassKvExposure {
    double exposed_s = 0, overlapped_s = 0;
};
// `gather_s`: one k/v all-gather; `hop_s`: one dk/dv hop; attention seconds of the block's whole forward and
// backward; `forward_passes`: 2 when a recompute repeats the attention.
PassKvExposure pass_kv_exposure(double gather_s, double hop_s, int64_t cp, double forward_attention_s,
                                double backward_attention_s, double forward_passes, bool compiled);

// The ledger phases of the exchange and the merge over the stage's blocks and micro-batches.
void schedule_context_parallel_pass_kv(Schedule& s, const ScheduleInputs& in);

}  // namespace ftb
