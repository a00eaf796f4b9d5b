#include "timing/rates.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "ftbound/error.hpp"

namespace ftb {

namespace {

// ---- Measured GEMM ceilings -------------------------------------------------------------------
// Each catalog GPU carries its ceiling in data/devices/gpus/*.yaml (`matmul_ceiling`, DeviceSpec::
// matmul_ceiling_bf16/_fp8): the best TFLOP/s of a sweep of shapes (validation/microbench.csv GT0418-GT0430,
// stas00/ml-engineering mamf-finder) against the dense peak the row states; a part no sweep has measured names
// the row it borrows there. The model multiplies measured / peak by the device's catalog peak.
// Which one a dtype uses: fp8 its own, else the bf16 one (fp16 runs on the same tensor-core path as bf16; for
// tf32 and fp32 no row exists, so the bf16 fraction is assumed); a device without any (given inline, no `base`)
// the lowest bf16 row of its vendor, as the catalog files of unmeasured parts take it:
struct DefaultCeiling {
    double measured_tflops, peak_tflops;
    const char* row;
};
constexpr DefaultCeiling kNvidiaDefault{1822.0, 2500, "GT0424 (GB200: the lowest NVIDIA row; no ceiling given)"};
constexpr DefaultCeiling kOtherDefault{668.4, 1300, "GT0425 (MI300X: the lowest row of all; no ceiling given)"};

struct Resolved {
    double fraction;
    std::string source;
};

Resolved resolve_ceiling(const DeviceSpec& dev, GpuArch arch, Dtype dtype) {
    const MatmulCeiling& fp8 = dev.matmul_ceiling_fp8;
    const MatmulCeiling& bf16 = dev.matmul_ceiling_bf16;
    if (dtype == Dtype::fp8 && fp8.measured_tflops > 0) return {fp8.measured_tflops / fp8.peak_tflops, fp8.row};
    if (bf16.measured_tflops > 0) return {bf16.measured_tflops / bf16.peak_tflops, bf16.row};
    const bool nvidia = dev.vendor == "nvidia" || arch == GpuArch::volta || arch == GpuArch::ada;
    const DefaultCeiling& d = nvidia ? kNvidiaDefault : kOtherDefault;
    return {d.measured_tflops / d.peak_tflops, d.row};
}

double peak_tflops(const PeakTflops& p, Dtype d) {
    switch (d) {
        case Dtype::fp32: return p.fp32;
        case Dtype::tf32: return p.tf32;
        case Dtype::fp16: return p.fp16;
        case Dtype::bf16: return p.bf16;
        case Dtype::fp8: return p.fp8;
    }
    return 0;
}

// What a framework actually runs when the device lacks the dtype's units: fp8 GEMMs fall back to
// bf16, bf16/fp16 to the other 16-bit type, then to fp32 (V100 has no bf16 tensor cores), tf32 to fp32.
Dtype runs_as(const PeakTflops& p, Dtype d) {
    auto has = [&](Dtype x) { return peak_tflops(p, x) > 0; };
    switch (d) {
        case Dtype::fp8:
            if (has(Dtype::fp8)) return Dtype::fp8;
            [[fallthrough]];
        case Dtype::bf16:
            if (has(Dtype::bf16)) return Dtype::bf16;
            if (d == Dtype::bf16 || !has(Dtype::fp16)) return Dtype::fp32;
            return Dtype::fp16;
        case Dtype::fp16:
            if (has(Dtype::fp16)) return Dtype::fp16;
            if (has(Dtype::bf16)) return Dtype::bf16;
            return Dtype::fp32;
        case Dtype::tf32: return has(Dtype::tf32) ? Dtype::tf32 : Dtype::fp32;
        case Dtype::fp32: return Dtype::fp32;
    }
    return Dtype::fp32;
}

// ---- Tiles ---------------------------------------------------------------------------------------
// Output tiles a GEMM library chooses among (CUTLASS/cuBLAS Hopper and Ampere kernels: 128x128,
// 128x256, 256x128 thread-block tiles); the best-quantising one is taken, as cuBLAS heuristics do.
struct Tile {
    int m, n;
};
constexpr Tile kTiles[] = {{128, 256}, {256, 128}, {128, 128}};
// One main-loop k-block moves 128 bytes of K per row (64 elements of a 16-bit type: CUTLASS's default
// K tile for bf16/fp16); the epilogue of a tile (write C) is counted as one more k-block of time.
constexpr double kKBlockBytes = 128;
constexpr double kEpilogueKBlocks = 1;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const char* to_string(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp32: return "fp32";
        case Dtype::tf32: return "tf32";
        case Dtype::fp16: return "fp16";
        case Dtype::bf16: return "bf16";
        case Dtype::fp8: return "fp8";
    }
    return "?";
}

double dtype_bytes(Dtype dtype) {
    switch (dtype) {
        case Dtype::fp32:
        case Dtype::tf32: return 4;
        case Dtype::fp16:
        case Dtype::bf16: return 2;
        case Dtype::fp8: return 1;
    }
    return 4;
}

DeviceRates device_rates(const DeviceSpec& dev) {
    DeviceRates r;
    r.cpu = dev.kind == DeviceKind::cpu;
    r.arch = gpu_arch(dev);
    if (!(dev.memory_bandwidth_GBps > 0))
        throw InputError(dev.name, "memory_bandwidth_GBps", "must be > 0");
    if (r.cpu) {
        r.sm_count = 1;
        // A probed triad is the achieved bandwidth already; a datasheet figure is a peak.
        r.memory_Bps = dev.memory_bandwidth_GBps * 1e9 * (dev.bandwidth_measured ? 1.0 : kCpuStreamFraction);
        for (int i = 0; i < kDtypeCount; ++i) {
            const Dtype d = static_cast<Dtype>(i);
            // A CPU runs 16-bit and fp8 GEMMs on AMX (its bf16 rate) when it has it, else in fp32.
            const bool low_precision = d == Dtype::bf16 || d == Dtype::fp16 || d == Dtype::fp8;
            r.runs_as[i] = low_precision && dev.peak_tflops.bf16 > 0 ? Dtype::bf16 : Dtype::fp32;
            r.peak_flops[i] = peak_tflops(dev.peak_tflops, r.runs_as[i]) * 1e12;
            if (dev.tflops_measured) {
                // PyTorch's linears (forward, dgrad, wgrad) at training shapes run at the probed sgemm rate: on the
                // 2-core EPYC VM, 14 shapes from 256x384x384 to 512x768x32000 reached 1.00-1.19x (median 1.11) of a
                // square 2048 sgemm with 2 threads and 0.85-0.97x (median 0.92) with 1 (torch 1.13 on OpenBLAS
                // 0.3.21; validation/measured/cpu-vm/microbench.md). The probed rate is used as it is.
                r.ceiling[i] = 1.0;
                r.ceiling_source[i] = "probed sgemm rate (torch linears at training shapes reach it: "
                                      "validation/measured/cpu-vm/microbench.md)";
            } else {
                r.ceiling[i] = kCpuComputeFraction;
                r.ceiling_source[i] = "Zlateski et al. 2018 (arXiv:1809.07851): 75% of peak on Xeon";
            }
        }
        return r;
    }
    if (dev.sm_count < 1) throw InputError(dev.name, "sm_count", "must be >= 1");
    r.sm_count = dev.sm_count;
    r.stream_k = r.arch == GpuArch::hopper || r.arch == GpuArch::blackwell;
    r.memory_Bps = dev.memory_bandwidth_GBps * 1e9 * kGpuStreamFraction;
    for (int i = 0; i < kDtypeCount; ++i) {
        const Dtype d = static_cast<Dtype>(i);
        r.runs_as[i] = runs_as(dev.peak_tflops, d);
        r.peak_flops[i] = peak_tflops(dev.peak_tflops, r.runs_as[i]) * 1e12;
        const Resolved c = resolve_ceiling(dev, r.arch, r.runs_as[i]);
        r.ceiling[i] = c.fraction;
        r.ceiling_source[i] = c.source;
    }
    return r;
}

GemmEstimate gemm_estimate(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceRates& rates) {
    GemmEstimate e;
    if (m <= 0 || n <= 0 || k <= 0) return e;
    const int di = static_cast<int>(dtype);
    const double peak = rates.peak_flops[di];
    if (!(peak > 0)) throw InputError("", "device.tflops", std::string("no GEMM rate for ") + to_string(dtype));
    const Dtype stored = rates.runs_as[di];
    const double in_bytes = dtype_bytes(stored);
    const double out_bytes = stored == Dtype::fp8 ? 2 : in_bytes;  // fp8 GEMMs write bf16
    const double flops = 2.0 * double(m) * double(n) * double(k);

    double efficiency = 1;
    if (!rates.cpu) {
        const int64_t k_block = static_cast<int64_t>(kKBlockBytes / in_bytes);
        const int64_t k_blocks = ceil_div(k, k_block);
        const int64_t sms = rates.sm_count;
        efficiency = 0;
        for (const Tile& t : kTiles) {
            const int64_t tiles = ceil_div(m, t.m) * ceil_div(n, t.n);
            const double per_tile_units = double(k_blocks) + kEpilogueKBlocks;
            // Time in units of one k-block of one tile on one SM.
            double units;
            if (rates.stream_k) {
                // Stream-K splits the total work evenly over the SMs; only the last unit quantises.
                units = std::ceil(double(tiles) * per_tile_units / double(sms));
            } else {
                units = double(ceil_div(tiles, sms)) * per_tile_units;  // whole waves of whole tiles
            }
            const double useful = double(m) * double(n) * double(k);
            const double eff = useful / (units * double(sms) * t.m * t.n * double(k_block));
            if (eff > efficiency) {
                efficiency = eff;
                e.tile_m = t.m;
                e.tile_n = t.n;
            }
        }
    }
    e.shape_efficiency = efficiency;
    e.compute_seconds = flops / (peak * rates.ceiling[di] * efficiency);
    const double bytes = (double(m) * double(k) + double(k) * double(n)) * in_bytes + double(m) * double(n) * out_bytes;
    e.memory_seconds = bytes / rates.memory_Bps;
    e.memory_bound = e.memory_seconds > e.compute_seconds;
    e.seconds = std::max(e.compute_seconds, e.memory_seconds);
    return e;
}

double gemm_seconds(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceRates& rates) {
    return gemm_estimate(m, n, k, dtype, rates).seconds;
}

double gemm_seconds(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceSpec& dev) {
    return gemm_seconds(m, n, k, dtype, device_rates(dev));
}

double memory_bound_seconds(double bytes, const DeviceRates& rates) {
    return bytes > 0 ? bytes / rates.memory_Bps : 0;
}

double memory_bound_seconds(double bytes, const DeviceSpec& dev) {
    return memory_bound_seconds(bytes, device_rates(dev));
}

double host_copy_seconds(double bytes, const LinkSpec& link, bool pinned) {
    if (!(link.bandwidth_GBps > 0)) throw InputError("", "link.bandwidth_GBps", "host link must have bandwidth > 0");
    if (!(bytes > 0)) return 0;
    const double rate_Bps = link.bandwidth_GBps * 1e9 * link.achievable_fraction * (pinned ? 1.0 : kPageableFraction);
    return link.latency_us * 1e-6 + bytes / rate_Bps;
}

double launch_overhead_seconds(int64_t kernels, LaunchMode mode) {
    if (kernels <= 0) return 0;
    return mode == LaunchMode::eager ? double(kernels) * kKernelLaunchHostSeconds : kKernelLaunchHostSeconds;
}

}  // namespace ftb
