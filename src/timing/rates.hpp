// Achievable rates of one device (DESIGN.md §4 "kernels"): GEMM time from shape and dtype, memory-bound
// kernels, host<->device copies, kernel launch overhead. Pure functions, no I/O.
//
// Hot path: build DeviceRates once per device (device_rates(), which reads names and picks the
// calibration), then call the DeviceRates overloads: arithmetic only, no allocation, no strings.
// The DeviceSpec overloads are conveniences that rebuild DeviceRates on every call.
#pragma once
#include <cstdint>
#include <string>

#include "ftbound/system_spec.hpp"
#include "system/device_arch.hpp"

namespace ftb {

enum class Dtype { fp32, tf32, fp16, bf16, fp8 };
inline constexpr int kDtypeCount = 5;
const char* to_string(Dtype dtype);
double dtype_bytes(Dtype dtype);  // storage size of one element (tf32 is stored as fp32)

// Per-device constants of the rate model, resolved from a DeviceSpec.
struct DeviceRates {
    bool cpu = false;
    GpuArch arch = GpuArch::other;
    int sm_count = 1;                      // SMs / CUs (GPU); 1 for a CPU (no tile quantisation)
    bool stream_k = false;                 // partial waves balanced by stream-K scheduling (Hopper+ cuBLAS)
    double peak_flops[kDtypeCount] = {};   // dense peak actually used for each dtype, FLOP/s (after fallback)
    Dtype runs_as[kDtypeCount] = {Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16, Dtype::fp8};
    double ceiling[kDtypeCount] = {};      // best achievable fraction of that peak (large, well-shaped GEMM)
    std::string ceiling_source[kDtypeCount];  // microbench row or documented default it came from
    double memory_Bps = 0;                 // achievable memory bandwidth for streaming kernels, bytes/s
};

DeviceRates device_rates(const DeviceSpec& dev);

// Breakdown of one GEMM C[m,n] = A[m,k] x B[k,n] estimate.
struct GemmEstimate {
    double seconds = 0;            // max(compute, memory)
    double compute_seconds = 0;    // 2mnk / (peak x ceiling x shape_efficiency)
    double memory_seconds = 0;     // bytes of A, B, C / achievable memory bandwidth
    double shape_efficiency = 1;   // tile/wave quantisation and per-tile overhead, in (0, 1]
    int tile_m = 0, tile_n = 0;    // the tile that was chosen (GPU)
    bool memory_bound = false;
};

// Throws InputError when the device has no rate at all for the dtype (every fallback is 0).
GemmEstimate gemm_estimate(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceRates& rates);
double gemm_seconds(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceRates& rates);
double gemm_seconds(int64_t m, int64_t n, int64_t k, Dtype dtype, const DeviceSpec& dev);

// Elementwise / norm / softmax kernels: bytes read + written at the achievable memory bandwidth.
double memory_bound_seconds(double bytes, const DeviceRates& rates);
double memory_bound_seconds(double bytes, const DeviceSpec& dev);

// One host<->device copy over `link` (a GPU's host link): pinned memory runs at the link's achievable
// bandwidth; pageable memory is staged by the driver through a pinned bounce buffer and is slower.
double host_copy_seconds(double bytes, const LinkSpec& link, bool pinned);

// Kernel launch overhead on the host (DESIGN.md §4 "host work"): the CPU time to issue kernels.
// It becomes step time only when the GPU waits for the CPU (many short kernels).
//  - eager: every kernel is a cudaLaunchKernel from Python/PyTorch;
//  - cuda_graph: one cudaGraphLaunch replays the whole captured sequence;
//  - torch.compile does not change the per-launch cost; it removes launches by fusing elementwise
//    kernels (the caller counts fewer kernels), and with mode="reduce-overhead" it captures CUDA graphs.
enum class LaunchMode { eager, cuda_graph };
// Host cost of one CUDA kernel launch: "about 4-6 us" through the driver and runtime
// (susun-blog.com, "pegainfer (3): From Launch Overhead to CUDA Graph", measured on an RTX 5070 Ti,
// CUDA 13.0); the lower end, since training loops launch back to back without synchronising.
inline constexpr double kKernelLaunchHostSeconds = 4e-6;
double launch_overhead_seconds(int64_t kernels, LaunchMode mode);

// Fractions of peak used above, exposed for the docs and tests.
// GPU memory-bound kernels: V100 microbenchmarks reached 750 GB/s of 900 GB/s HBM2 peak (83%)
// (Jia et al. 2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826).
inline constexpr double kGpuStreamFraction = 750.0 / 900.0;
// CPU sockets: "on average, during the compute bound stages, 75% of theoretical peak FLOPS were attained;
// in memory bound stages slightly more than 85% of the theoretical memory bandwidth" (Zlateski et al.
// 2018, "FFT Convolutions are Faster than Winograd on Modern CPUs, Here's Why", arXiv:1809.07851, Xeon).
inline constexpr double kCpuComputeFraction = 0.75;
inline constexpr double kCpuStreamFraction = 0.85;
// Pageable vs pinned host-to-device copies: 5.37 vs 6.19 GB/s with bandwidthTest-style copies on a
// Tesla C2050 over PCIe 2.0 x16 (M. Harris, "How to Optimize Data Transfers in CUDA C/C++", NVIDIA
// Developer Blog, 2012), i.e. pageable runs at 87% of pinned.
inline constexpr double kPageableFraction = 5.37 / 6.19;

}  // namespace ftb
