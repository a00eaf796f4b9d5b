// Host measurements: all-core memory bandwidth (STREAM-triad style) and matrix-multiply rates.
#pragma once
#include <optional>
#include <string>

#include "probe/probe_types.hpp"

namespace ftb::probe {

struct HostBenchOptions {
    int threads = 0;              // 0: every online CPU
    double array_bytes = 0;       // per triad array; 0: 4x the last-level caches, at least 128 MiB
    int triad_repetitions = 10;
    int gemm_repetitions = 5;
    double gemm_min_seconds = 0.1;  // grow the matrix until one multiply takes this long
    int gemm_max_size = 8192;
};

// a[i] = b[i] + s*c[i] on `threads` pinned threads, first-touch placement; bandwidth counts 24 bytes
// per element (STREAM's convention: two arrays read, one written; write-allocate traffic not counted).
Measurement triad_bandwidth_GBps(int threads, double array_bytes, int repetitions);

// fp32 GEMM through the linked BLAS (cblas_sgemm); nullopt when ftbound was built without BLAS.
std::optional<GemmRate> sgemm_rate(int threads, const HostBenchOptions& opt);

// bf16 GEMM: the BLAS's cblas_sbgemm when it has one, else the AVX512-BF16 kernel; nullopt (with the
// reason) when the CPU has neither path.
std::optional<GemmRate> bf16_gemm_rate(int threads, const HostBenchOptions& opt, std::string& skipped_reason);

// Last-level cache bytes of the whole machine (sum over sockets), from ROOT/sys; 0 when unknown.
double last_level_cache_bytes(const std::string& root, int sockets);

HostBench run_host_bench(const HostInfo& host, const HostBenchOptions& opt);

}  // namespace ftb::probe
