// From the allocated peak to what the device shows: the caching allocator's reservation, the CUDA context,
// communicator buffers; then the verdict against capacity with the band of what is uncertain.
#pragma once
#include <utility>

#include "ftbound/job.hpp"
#include "ftbound/memory.hpp"

namespace ftb {

// Fills reserved_peak_bytes, cuda_context_bytes, comm_buffer_bytes, device_used_bytes and overhead from
// allocated_peak_bytes and the breakdown. On a CPU, what malloc holds above the live tensors is
// `host_heap_retained_bytes` (memory/host_heap.hpp) in place of the GPU caching allocator's overhead.
void add_device_memory(const Job& job, MemoryResult& res, double host_heap_retained_bytes);

// Half-widths (below, above) of the uncertainty band around `total` bytes made of `parts`.
struct Band {
    double below = 0, above = 0;
};
Band uncertainty_band(const MemoryBreakdown& parts, double total);

// The band of each reported figure, [low, high] in bytes, with the same per-kind fractions over what the figure
// holds: allocated (live tensors, no overhead), reserved (+ the allocator's cache above them), device used
// (memory.band_bytes). What `ftbound validate` checks the measured peaks against.
enum class MemoryFigure { allocated_peak, reserved_peak, device_used };
std::pair<double, double> figure_band_bytes(const MemoryResult& res, MemoryFigure figure);

// Verdict, band, margin and fits of device_used against the capacity (GPU memory, or host RAM per socket
// on CPU servers).
void decide_fit(MemoryResult& res);

}  // namespace ftb
