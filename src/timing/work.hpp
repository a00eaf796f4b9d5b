// The unit every cost is added to: one pass's kernels on one GPU split by what bounds them, and what every
// kernel estimate of a job needs (WorkContext). Each cost of a block lives in a unit of its own (attention_work,
// qlora_dequant, fsdp_gradient_traffic, ...); work_builder.hpp assembles them per block and stage.
#pragma once
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

struct LayerWork {
    Work forward, backward, recompute;
};

}  // namespace ftb
