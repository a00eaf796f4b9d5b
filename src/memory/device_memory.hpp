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

// The reported memory figures: allocated (live tensors, no overhead), reserved (+ the allocator's cache above
// them), device used (+ context and communicator buffers; memory.band_bytes).
enum class MemoryFigure { allocated_peak, reserved_peak, device_used };

// The bytes of one figure by how well the model knows them:
// - state: weights, gradients, optimizer states (parameter counts times element sizes);
// - saved: activations and logits (the saved-tensor accounting; the kernel chosen at run time, compiled fusions
//   and padding change what is saved);
// - overhead: temporaries and device overhead (allocator cache, CUDA context, communicator buffers, glibc's
//   heap), which depend on allocation order and the driver, which the plan does not see.
struct BandParts {
    double state_bytes = 0, saved_bytes = 0, overhead_bytes = 0;
    double total_bytes = 0;   // the figure
};
BandParts band_parts(const MemoryResult& res, MemoryFigure figure);
BandParts band_parts(const MemoryBreakdown& breakdown, double total_bytes);

// How far each kind may be off, as a fraction of its bytes.
struct BandFractions {
    double state = 0, saved = 0, overhead = 0;
};
// CALIBRATED by `ftbound validate --fit-band` (src/validate/band_fit.hpp, docs/validation.md) on the public
// memory cases of quality high and medium (LitGPT, torchtune, Qwen): the narrowest fractions whose band holds
// the measured peak of at least 90% of them. Not physics: how far the model has been seen to miss.
inline constexpr BandFractions kBandFractions{0.05, 0.12, 0.25};
// No band is wider than this fraction of its figure (issue 9's limit on an honest band).
inline constexpr double kMaxBandHalfWidth = 0.10;

// Half-widths (below, above) of the uncertainty band around a figure.
struct Band {
    double below = 0, above = 0;
};
Band uncertainty_band(const BandParts& parts, const BandFractions& fractions = kBandFractions);

// The band of each reported figure, [low, high] in bytes. What `ftbound validate` checks the measured peaks against.
std::pair<double, double> figure_band_bytes(const MemoryResult& res, MemoryFigure figure);

// Verdict, band, margin and fits of device_used against the capacity (GPU memory, or host RAM per socket
// on CPU servers).
void decide_fit(MemoryResult& res);

}  // namespace ftb
