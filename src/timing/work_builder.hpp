// The work builder: one micro-batch of one pipeline stage turned into kernels on one GPU (matmuls by shape,
// attention, memory-bound kernels, QLoRA dequantisation), split by what bounds them, with the kernel count the
// host must issue. No scheduling here: scheduler.hpp places this work on streams.
#pragma once
#include <vector>

#include "ftbound/job.hpp"
#include "ftbound/timing.hpp"
#include "memory/training_setup.hpp"
#include "timing/rates.hpp"

namespace ftb {

// Kernels of one pass, split by what bounds them.
struct Work {
    double matmul_s = 0;      // compute-bound GEMMs
    double attention_s = 0;   // attention core
    double memory_s = 0;      // memory-bound GEMMs and elementwise / norm / softmax kernels
    double dequant_s = 0;     // QLoRA weight dequantisation (memory-bound)
    double kernels = 0;
    double gemm_ops = 0;      // GEMM operator calls (a batched attention GEMM is one call)
    double flops = 0;
    double gpu_seconds() const { return matmul_s + attention_s + memory_s + dequant_s; }
    Work& operator+=(const Work& o);
};

// What every kernel estimate of one job needs, resolved once per plan.
struct WorkContext {
    const Job& job;
    const TrainingSetup& set;
    const DeviceRates& rates;
    const ResourceScale& scale;
    Dtype dt;               // the dtype the GEMMs run in
    double tp;              // tensor-parallel degree
    double act_bytes;       // element size of activations
    double resid_bytes;     // element size of the residual stream
    bool compiled;          // torch.compile fuses elementwise chains
    bool fused_norm;
    bool fused_qkv;
    double sustained;       // 1 / matmul_time_factor of the framework on this device
};

WorkContext make_work_context(const Job& job, const TrainingSetup& set, const DeviceRates& rates,
                              const ResourceScale& scale);

// C[m,n] = A[m,k] x B[k,n], `count` times: compute-bound into matmul_s, memory-bound into memory_s.
// `batched`: the `count` GEMMs are one batched call (torch.bmm), else `count` calls.
void add_gemm(Work& w, const WorkContext& c, double m, double n, double k, double count = 1, bool batched = false);
// Memory-bound kernels moving `bytes` in total.
void add_memory_bound(Work& w, const WorkContext& c, double bytes, double kernels);

// Fraction of the dense peak the fused attention kernel reaches on this architecture, forward or backward.
double attention_efficiency(GpuArch arch, int kernel_generation, bool backward = false);
// FlashAttention backward executes 2.5x the forward FLOPs (5 matmuls against 2, Dao 2023 §3).
inline constexpr double kAttentionBackwardFlopsFactor = 2.5;

struct LayerWork {
    Work forward, backward, recompute;
};

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
    std::vector<double> layer_forward_s, layer_backward_s;   // per block (backward includes its recompute)
    double gpu_s = 0;             // kernel time of the micro-batch
    double host_issue_s = 0;      // host time to issue its kernels and run the framework's per-block code
    double pool_switch_s = 0;     // CPU: GEMM calls waiting while the BLAS's and OpenMP's thread pools take turns
    double wall_s = 0;            // the micro-batch as the stream sees it: kernels, or the host when it is slower
    double first_stage_flops = 0; // one micro-batch on a first-stage GPU
    double last_stage_flops = 0;  // one micro-batch on a last-stage GPU
    double middle_stage_flops = 0; // one micro-batch on a GPU of a stage in between
    double launch_idle_s() const { return wall_s - gpu_s; }   // GPU waiting for the host
};

// Host time to issue one kernel (launch + the framework's per-kernel Python work).
double host_seconds_per_kernel(const Job& job, const ResourceScale& scale);

// Work of one micro-batch on the pipeline's critical stage (the first stage, or the last when it is slower).
StageWork critical_stage_work(const WorkContext& c, const MicroBatchShape& shape);

}  // namespace ftb
