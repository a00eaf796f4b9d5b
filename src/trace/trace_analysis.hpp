// Analyses of read traces (one per rank): where the GPU's time goes, why it idles, copies, overlap,
// top kernels, steps, memory; across ranks the step skew and the straggler; and the bottleneck in the
// plan's resource vocabulary with its evidence. Pure functions over TraceTables: no I/O.
// Definitions are in docs/diagnose.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_tables.hpp"

namespace ftb::trace {

// Gaps between GPU ops shorter than this, with the next op already launched, count as kernel_wait
// (back-to-back launch overhead). Source: HolisticTraceAnalysis TraceAnalysis.get_idle_time_breakdown,
// consecutive_kernel_delay default 30 (trace units, microseconds).
inline constexpr std::int64_t kKernelWaitThresholdNs = 30'000;

// A loss (idle, exposed communication, copies) this large outranks the largest busy class: removing it
// would shorten the step by at least 1/(1-0.25) = 1.33x. A design choice of this tool, not a literature value.
inline constexpr double kLargeLossShare = 0.25;

struct GpuTimeFractions {
    double compute = 0, communication = 0, memcpy = 0, idle = 0;  // of the window; sum to 1
};

struct IdleSplit {
    double host_wait = 0, kernel_wait = 0, other = 0;  // of the window; sum to GpuTimeFractions::idle
    double host_wait_in_dataloader = 0;                // part of host_wait while a DataLoader range ran
};

struct MemcpyFigures {
    std::uint64_t h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0, other_bytes = 0;
    std::int64_t h2d_ns = 0, d2h_ns = 0, d2d_ns = 0;
    std::uint64_t pageable_bytes = 0;  // of h2d + d2h
    double h2d_GBps() const { return h2d_ns > 0 ? static_cast<double>(h2d_bytes) / h2d_ns : 0.0; }
    double d2h_GBps() const { return d2h_ns > 0 ? static_cast<double>(d2h_bytes) / d2h_ns : 0.0; }
    double d2d_GBps() const { return d2d_ns > 0 ? static_cast<double>(d2d_bytes) / d2d_ns : 0.0; }
    double pageable_fraction() const {
        auto host = h2d_bytes + d2h_bytes;
        return host > 0 ? static_cast<double>(pageable_bytes) / host : 0.0;
    }
};

struct KernelTotal {
    std::string name;
    std::int64_t count = 0;
    double seconds = 0;
    double share = 0;  // of all kernel time in the window
};

struct StepTime {
    std::int64_t number = 0;
    double seconds = 0;
};

// One collective kernel, keyed for matching across ranks: (step, ordinal in step) or the trace's own
// sequence number when it records one.
struct CollectiveStart {
    std::int64_t step = 0;
    std::int64_t sequence = 0;
    std::int64_t start_ns = 0;  // wall clock (base_time_ns added)
};

struct RankAnalysis {
    std::int64_t rank = 0;
    std::int32_t device = -1;
    std::int64_t window_start_ns = 0, window_end_ns = 0;
    bool window_from_steps = false;
    double window_seconds = 0;
    GpuTimeFractions gpu;
    IdleSplit idle;
    MemcpyFigures memcpy;
    double communication_seconds = 0;  // any communication kernel running
    double comm_compute_overlap = 0;   // fraction of communication_seconds with compute running too
    double kernel_seconds = 0;  // all kernels starting in the window
    std::vector<KernelTotal> top_kernels;
    std::vector<StepTime> steps;
    std::optional<std::int64_t> peak_allocated_bytes;
    std::vector<CollectiveStart> collectives;
    std::int64_t launches_joined = 0, launches_missing = 0;  // GPU ops in window with / without their launch
    std::vector<std::string> warnings;
};

struct Straggler {
    std::int64_t rank = 0;
    double mean_lateness_seconds = 0;  // mean over matched collectives of (its start - earliest start)
    std::int64_t collectives_matched = 0;
};

struct Bottleneck {
    std::string resource;  // plan vocabulary, or `idle`
    double share = 0;      // of the window
    std::string evidence;
};

struct Diagnosis {
    std::vector<RankAnalysis> ranks;
    double window_seconds = 0;  // mean over ranks
    GpuTimeFractions gpu;       // means over ranks
    IdleSplit idle;
    MemcpyFigures memcpy;       // summed over ranks (bandwidths are totals over totals)
    double comm_compute_overlap = 0;
    double communication_seconds = 0;  // mean over ranks
    std::vector<KernelTotal> top_kernels;  // over all ranks
    double mean_step_seconds = 0;          // over all steps of all ranks; 0 without steps
    std::optional<std::int64_t> peak_allocated_bytes;  // max over ranks
    std::optional<double> step_skew_seconds;  // mean over common steps of (slowest - fastest rank)
    std::optional<Straggler> straggler;
    Bottleneck bottleneck;
    std::vector<std::string> warnings;
};

RankAnalysis analyse_rank(const TraceTables& tables, std::int64_t fallback_rank, std::size_t top_kernel_count = 10);

// `tables` and `per_rank` in the same order; needs at least one rank.
Diagnosis diagnose(const std::vector<const TraceTables*>& tables, std::vector<RankAnalysis> per_rank,
                   std::size_t top_kernel_count = 10);

// The communication resource: the GPU fabric when all ranks fit on the devices one host shows, else the network.
std::string communication_resource(const std::vector<const TraceTables*>& tables);

}  // namespace ftb::trace
