// What the trace reader keeps of a PyTorch profiler (Kineto) trace: the GPU-side intervals and the few
// host-side facts the analyses need, as plain tables. Times are integer nanoseconds on the trace's own
// clock (relative to base_time_ns when the trace has `baseTimeNanoseconds`), so no precision is lost
// to doubles on absolute microsecond timestamps.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ftb::trace {

enum class GpuOpKind : std::uint8_t { kernel, memcpy, memset };
enum class CopyDirection : std::uint8_t { none, h2d, d2h, d2d, h2h, p2p };

struct GpuOp {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t correlation = -1;  // joins the op to the host runtime call that launched it; -1 unknown
    std::int64_t collective_seq = -1;  // the collective's sequence number when the trace records one
    std::uint64_t bytes = 0;           // memcpy / memset only
    std::uint32_t name_id = 0;         // index into TraceTables::names
    std::int32_t device = -1;
    std::int32_t stream = -1;
    GpuOpKind kind = GpuOpKind::kernel;
    CopyDirection direction = CopyDirection::none;
    bool is_communication = false;  // NCCL/RCCL collective or point-to-point kernel
    bool pageable = false;          // host side of the copy is pageable (not pinned) memory
};

// A CUDA runtime/driver call on the host; the launch of a GPU op when its correlation matches.
struct RuntimeCall {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t correlation = -1;
    bool is_graph_launch = false;  // cudaGraphLaunch: one call launches many GPU ops with its correlation
};

struct HostRange {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct ProfilerStep {
    std::int64_t number = 0;  // N of `ProfilerStep#N`
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// The GPU-side end of an `ac2g` flow (host launch -> GPU op); its id is the correlation in Kineto.
struct FlowEnd {
    std::int64_t ts_ns = 0;
    std::int64_t id = 0;
};

struct DeviceInfo {
    std::int64_t id = -1;
    std::string name;
    std::int64_t total_memory_bytes = 0;
};

struct TraceTables {
    std::vector<GpuOp> gpu_ops;
    std::vector<RuntimeCall> runtime_calls;
    std::vector<HostRange> dataloader_ranges;  // host ranges of the DataLoader fetching a batch
    std::vector<ProfilerStep> steps;
    std::vector<FlowEnd> flow_ends;
    std::vector<std::string> names;  // interned GPU op names
    std::int64_t flow_starts = 0;

    // Peak of `Total Allocated` over `[memory]` events of GPU devices; absent without memory events.
    std::optional<std::int64_t> peak_allocated_bytes;

    std::optional<std::int64_t> base_time_ns;  // `baseTimeNanoseconds`: add to every time for the wall clock
    std::optional<std::int64_t> rank;          // distributedInfo.rank
    std::optional<std::int64_t> world_size;    // distributedInfo.world_size
    std::string backend;                       // distributedInfo.backend
    std::vector<DeviceInfo> devices;           // deviceProperties

    // Span of the complete ('X') events other than the profiler's own `Trace` span.
    std::int64_t first_ns = INT64_MAX;
    std::int64_t last_ns = INT64_MIN;

    std::uint64_t events_read = 0;
    std::uint64_t events_ignored = 0;  // well-formed JSON, but not a usable event (e.g. negative duration)
    std::uint64_t json_bytes_read = 0;  // uncompressed bytes consumed
    bool complete = true;               // false when the read stopped early (--partial)
    std::string stop_reason;            // why it stopped, when it did
    double fraction_read = 1.0;         // of the file's bytes, when it stopped early
};

}  // namespace ftb::trace
