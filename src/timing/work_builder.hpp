// The work builder: one micro-batch of one pipeline stage turned into kernels on one GPU (matmuls by shape,
// attention, memory-bound kernels, QLoRA dequantisation), split by what bounds them, with the kernel count the
// host must issue. No scheduling here: scheduler.hpp places this work on streams.
#pragma once
#include <vector>

#include "timing/attention_work.hpp"
#include "timing/work.hpp"

namespace ftb {

// One block, one micro-batch of `tokens` tokens (per GPU) of sequences `seq` long.
LayerWork layer_work(const LayerSpec& l, const ModelSpec& m, const WorkContext& c, double tokens, double seq,
                     bool trains, bool needs_grad);

// The sequence a micro-batch computes on, and its tokens per GPU.
struct MicroBatchShape {
    double real_tokens_per_seq = 0;   // tokens that count toward throughput
    double compute_seq = 0;           // sequence length the kernels run on (padding included)
    double tokens_per_gpu = 0;        // micro_batch * compute_seq / cp
};
MicroBatchShape micro_batch_shape(const Job& job);

// One micro-batch on the slowest pipeline stage, as the GPU runs it and the host issues it.
struct StageWork {
    Work forward, backward, recompute;
    double attention_forward_s = 0, attention_backward_s = 0;
    // Per block as the stream sees it (backward includes its recompute): kernel time, stretched by the host's when
    // the phase is host-bound (transfers and collectives hide under the stream's time, kernels or waiting).
    std::vector<double> layer_forward_s, layer_backward_s;
    double forward_wall_s = 0, backward_wall_s = 0;   // each phase as the stream sees it (backward + recompute)
    double gpu_s = 0;             // kernel time of the micro-batch
    double host_issue_s = 0;      // host time to issue its kernels and run the framework's per-block code
    double pool_switch_s = 0;     // CPU: GEMM calls waiting while the BLAS's and OpenMP's thread pools take turns
    double wall_s = 0;            // the micro-batch as the stream sees it: kernels, or the host when it is slower
    double first_stage_flops = 0; // one micro-batch on a first-stage GPU
    double last_stage_flops = 0;  // one micro-batch on a last-stage GPU
    double middle_stage_flops = 0; // one micro-batch on a GPU of a stage in between
    double launch_idle_s() const { return wall_s - gpu_s; }   // GPU waiting for the host
};

// Work of one micro-batch on the pipeline's critical stage (the first stage, or the last when it is slower).
StageWork critical_stage_work(const WorkContext& c, const MicroBatchShape& shape);

}  // namespace ftb
