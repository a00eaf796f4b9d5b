// The memory model (DESIGN.md §3): a walk through forward, backward and the optimizer step,
// per GPU and per pipeline stage, tracking what is live.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ftbound/job.hpp"

namespace ftb {

// Bytes live at the peak, by kind (CONTRACT.md memory.breakdown).
struct MemoryBreakdown {
    double weights_bytes = 0;      // parameters in every dtype they exist (+ gathered ZeRO-3 layers, compute copies)
    double gradients_bytes = 0;
    double optimizer_bytes = 0;    // optimizer states + fp32 master weights
    double activations_bytes = 0;  // saved for backward
    double logits_bytes = 0;       // logits and loss tensors
    double temporary_bytes = 0;    // op workspaces, communication buckets, optimizer-step intermediates
    double overhead_bytes = 0;     // reserved-above-allocated + CUDA context + communicator buffers

    double allocated() const {
        return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + logits_bytes + temporary_bytes;
    }
};

enum class MemoryPhase { forward, loss, backward, optimizer_step };
const char* to_string(MemoryPhase);

// fits: the whole uncertainty band lies below the capacity; tight: the capacity lies inside the band (it may
// or may not fit); does_not_fit: even the band's lower edge is above the capacity (CONTRACT.md memory.verdict).
enum class MemoryVerdict { fits, tight, does_not_fit };
const char* to_string(MemoryVerdict);

// Per-token activation bytes of one block, by what keeps them (for reports and tests).
struct LayerActivationBytes {
    double norms = 0;
    double projections_in = 0;     // inputs saved by trainable projections (and LoRA adapters)
    double attention = 0;          // q, k, v, output, softmax statistics or scores
    double ffn = 0;
    double dropout_masks = 0;
    double total() const { return norms + projections_in + attention + ffn + dropout_masks; }
};

struct MemoryResult {
    double allocated_peak_bytes = 0;
    double reserved_peak_bytes = 0;
    double device_used_bytes = 0;
    double capacity_bytes = 0;
    bool fits = false;             // false only when the verdict is does_not_fit
    MemoryVerdict verdict = MemoryVerdict::does_not_fit;
    double band_low_bytes = 0;     // uncertainty band around device_used_bytes
    double band_high_bytes = 0;
    double margin_bytes = 0;       // capacity_bytes - device_used_bytes (negative when over)
    double paged_bytes = 0;        // bitsandbytes paged optimizer states in CUDA unified memory: outside the
                                   // caching allocator, evicted to host RAM under pressure, so never the cause
                                   // of an OOM; not part of device_used
    MemoryBreakdown breakdown;     // at the peak
    MemoryPhase peak_phase = MemoryPhase::forward;
    int peak_stage = 0;            // pipeline stage holding the peak
    double cuda_context_bytes = 0;
    double comm_buffer_bytes = 0;
    double allocator_overhead_bytes = 0;
    // The caching allocator per stream (memory/device_memory.hpp): the compute stream's largest reservation over the
    // step and what the collectives' own streams keep (FSDP2's all-gather outputs and sharded gradients).
    double compute_stream_peak_bytes = 0;
    double side_stream_pool_bytes = 0;
    double host_bytes = 0;         // host RAM per node for offloaded state and pinned buffers
    double offloaded_activation_bytes = 0;   // per GPU and micro-batch: saved activations sent to host and back
    double host_capacity_bytes = 0;
    bool host_fits = true;
    double total_params = 0;
    double trainable_params = 0;
    double params_per_gpu = 0;     // parameters this GPU stores (after TP/PP/ZeRO-3 sharding)
    double tokens_per_micro_batch = 0;   // per GPU, after CP
    double in_flight_micro_batches = 1;  // pipeline schedule (first stage)
    LayerActivationBytes layer_activation_per_token;  // one representative block, per token (before TP/CP)
};

// One moment of the walk (for reports: memory through the step): what is live, by kind.
struct MemoryWalkPoint {
    MemoryPhase phase = MemoryPhase::forward;
    int block = -1;                // the block running (forward, backward); -1 for the loss and the optimizer step
    MemoryBreakdown live;          // allocated bytes by kind; overhead_bytes stays 0
};

// The walk of the pipeline stage that holds the peak, in execution order: forward block by block, the loss,
// backward block by block from the top, the optimizer step. Its largest point is the allocated peak.
struct MemoryWalk {
    int stage = 0;
    std::vector<MemoryWalkPoint> points;
};

// The whole walk. Pure: no I/O, no allocation beyond the result (and `walk`, when asked for).
MemoryResult plan_memory(const Job& job, MemoryWalk* walk = nullptr);

// A typical step: what a framework that logs each step's peak shows on most steps. Packed, every step has the
// worst step's shape (nullopt). Unpacked with avg_seq_len, the job with every sequence padded to
// JobSpec::expected_padded_seq_len, the length a typical micro-batch is padded to, where plan_memory(job) sizes
// the longest batch the job allows (the OOM question).
std::optional<Job> typical_step_job(const Job& job);
// Its allocated peak; `worst` is plan_memory(job).
double typical_step_allocated_peak_bytes(const Job& job, const MemoryResult& worst);

// The central figure is within the capacity (what limits bisect on; the verdict may still say tight).
inline bool within_capacity(const MemoryResult& m) { return m.margin_bytes >= 0; }

// Largest micro_batch / seq_len whose central figure is within capacity (bisection on the monotone model);
// 0 when even 1 does not fit.
int64_t max_micro_batch(const Job& job);
int64_t max_seq_len(const Job& job);

}  // namespace ftb
