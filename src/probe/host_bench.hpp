// Host measurements: all-core memory bandwidth (STREAM-triad style) and matrix-multiply rates.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "probe/probe_types.hpp"

namespace ftb::probe {

struct HostBenchOptions {
    int threads = 0;              // 0: OMP_NUM_THREADS where set (what a framework started here uses), else every allowed CPU
    double array_bytes = 0;       // per triad array; 0: 4x the last-level caches, at least 128 MiB
    int triad_repetitions = 10;
    int gemm_repetitions = 5;
    double gemm_min_seconds = 0.1;  // grow the matrix until one multiply takes this long
    int gemm_max_size = 8192;
    bool torch = false;             // also time PyTorch's per-op cost through python3 (when torch is installed)
    std::string python = "python3"; // the interpreter that has torch
};

// a[i] = b[i] + s*c[i] on `threads` pinned threads, first-touch placement; bandwidth counts 24 bytes
// per element (STREAM's convention: two arrays read, one written; write-allocate traffic not counted).
Measurement triad_bandwidth_GBps(int threads, double array_bytes, int repetitions);

// fp32 GEMM through the BLAS (cblas_sgemm, loaded on first use); nullopt when ftbound was built without one or it cannot be loaded.
std::optional<GemmRate> sgemm_rate(int threads, const HostBenchOptions& opt);

// bf16 GEMM: the BLAS's cblas_sbgemm when it has one, else the AVX512-BF16 kernel (`native` true); on a CPU with
// neither, bf16 inputs converted to fp32 and multiplied by the BLAS's sgemm (`native` false), which is how PyTorch
// still runs bf16 there, slowly. nullopt (with the reason) only without a BLAS.
std::optional<GemmRate> bf16_gemm_rate(int threads, const HostBenchOptions& opt, bool& native, std::string& skipped_reason);

// The CPUs this process may run on (its affinity mask).
std::vector<int> allowed_cpus();

// The thread count the host benchmarks use for `requested` (0: OMP_NUM_THREADS where set, else every allowed CPU),
// and where it came from.
int host_threads(int requested, std::string& from);

// The threading variables set in the environment and the BLAS in use (library, build, threads, threading model).
Threading blas_threading();

// Writing `bytes` of freshly mmapped anonymous memory on `threads` threads, then unmapping it: the rate at which
// a process fills pages the kernel has just handed it (a page fault and the kernel's zeroing per 4 KiB page).
// PyTorch on CPU allocates through malloc, which maps blocks above its mmap threshold afresh on every allocation.
Measurement first_touch_GBps(int threads, double bytes, int repetitions);

// Host time per eager PyTorch op on this CPU, measured by running python3 with torch when it is installed: a chain
// of 100 multiplications of a one-element tensor that requires grad, forward and backward, per op and pass
// (forward with autograd recording, and the engine's backward node). nullopt (with the reason) without torch.
// Also gives the resident set of that process right after `import torch` (the runtime every training process carries),
// and the extra time of a GEMM call made between OpenMP-parallel ops: a loop alternating a 256x512 elementwise
// multiply (OpenMP) and a 256x512x512 linear (the BLAS) against each loop alone, per pair. It is large when the BLAS
// keeps its own thread pool beside PyTorch's OpenMP one (Debian's torch on OpenBLAS-pthreads: the pools spin-wait
// and take turns on the cores) and near 0 when they share one (MKL or OpenBLAS-openmp builds).
struct TorchRates {
    Measurement op_us;
    Measurement blas_switch_us;
    double runtime_rss_bytes = 0;
};
std::optional<TorchRates> torch_rates(int threads, const std::string& python, std::string& skipped_reason);

// Last-level cache bytes of the whole machine (sum over sockets), from ROOT/sys; 0 when unknown.
double last_level_cache_bytes(const std::string& root, int sockets);

HostBench run_host_bench(const HostInfo& host, const HostBenchOptions& opt);

}  // namespace ftb::probe
