// Kernel time of one pass (work.hpp): GEMMs by the tile/wave model, memory-bound kernels by their bytes.
#include "timing/work.hpp"

#include <cmath>

namespace ftb {

Work& Work::operator+=(const Work& o) {
    matmul_s += o.matmul_s, attention_s += o.attention_s, memory_s += o.memory_s, dequant_s += o.dequant_s;
    kernels += o.kernels, gemm_ops += o.gemm_ops, flops += o.flops;
    return *this;
}

namespace {

Dtype gemm_dtype(Precision p) {
    switch (p) {
        case Precision::fp32: return Dtype::fp32;
        case Precision::tf32: return Dtype::tf32;
        case Precision::fp16: return Dtype::fp16;
        case Precision::bf16: return Dtype::bf16;
        case Precision::fp8: return Dtype::fp8;
    }
    return Dtype::bf16;
}

// Matmul time factor of the framework on this architecture (FrameworkProfile::matmul_time_factor, fitted by
// `ftbound validate --leave-out`). An architecture without its own figure runs at 1: a factor fitted on
// one GPU generation is not carried to another without a case that shows it holds.
double matmul_time_factor(const FrameworkProfile& fw, GpuArch arch) {
    for (const auto& [name, f] : fw.matmul_time_factor)
        if (name == to_string(arch)) return f;
    return 1.0;
}

}  // namespace

WorkContext make_work_context(const Job& job, const TrainingSetup& set, const DeviceRates& rates,
                              const ResourceScale& scale) {
    const TrainSpec& tr = job.spec.train;
    return WorkContext{job, set, rates, scale, gemm_dtype(tr.precision), double(job.spec.parallel.tp),
                       set.bytes.act, set.bytes.residual, tr.compile, job.framework.fused_norm, set.fused_qkv,
                       job.system.cpu_only ? 1.0 : 1.0 / matmul_time_factor(job.framework, rates.arch)};
}

void add_gemm(Work& w, const WorkContext& c, double m, double n, double k, double count, bool batched) {
    if (m < 1 || n < 1 || k < 1 || count <= 0) return;
    const GemmEstimate e = gemm_estimate(int64_t(std::ceil(m)), int64_t(std::ceil(n)), int64_t(std::ceil(k)), c.dt, c.rates);
    if (e.memory_bound) w.memory_s += count * e.seconds / c.scale[Resource::memory_bandwidth];
    else w.matmul_s += count * e.seconds / (c.scale[Resource::compute] * c.sustained);
    w.kernels += count;
    w.gemm_ops += batched ? 1 : count;
    w.flops += 2.0 * m * n * k * count;
}

void add_memory_bound(Work& w, const WorkContext& c, double bytes, double kernels) {
    w.memory_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
    w.kernels += kernels;
}

}  // namespace ftb
