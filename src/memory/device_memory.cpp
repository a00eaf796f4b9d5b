#include "memory/device_memory.hpp"

#include <algorithm>
#include <cmath>

namespace ftb {

void add_device_memory(const Job& job, MemoryResult& res, double host_heap_retained_bytes) {
    const FrameworkProfile& fw = job.framework;
    const ParallelSpec& par = job.spec.parallel;
    const DeviceSpec& dev = job.system.device;
    // GPU caching allocator: each stream's pool keeps what it mapped at its own peak (blocks are reused only on the
    // stream that made them), so the reservation is the compute stream's high-water mark, holes included, plus the
    // collectives' pools; above that, segments cached beyond the live blocks that the walk does not place
    // (allocator_overhead_fraction of the allocated peak), and the 2 MiB rounding of large blocks. CPU: what
    // glibc's heap holds beyond the live tensors (memory/host_heap.hpp).
    const bool gpu = dev.kind == DeviceKind::gpu;
    const double streams = std::max(res.allocated_peak_bytes, res.compute_stream_peak_bytes + res.side_stream_pool_bytes);
    res.allocator_overhead_bytes = gpu ? streams - res.allocated_peak_bytes + res.allocated_peak_bytes * fw.allocator_overhead_fraction
                                       : host_heap_retained_bytes;
    res.reserved_peak_bytes =
        std::ceil((res.allocated_peak_bytes + res.allocator_overhead_bytes) / (2.0 * 1048576)) * 2.0 * 1048576;
    // NCCL communicators: one per parallel dimension in use (data, tensor, pipeline, context, expert). CPU
    // processes talk through gloo, which sends from the tensors themselves and keeps no NCCL buffers.
    const int communicators = (par.dp > 1) + (par.tp > 1) + (par.pp > 1) + (par.cp > 1) + (par.ep > 1);
    res.comm_buffer_bytes = dev.kind == DeviceKind::gpu ? communicators * fw.nccl_buffer_bytes : 0;
    // A GPU's CUDA context; on a CPU the process's resident libraries and interpreter after `import torch`
    // (measured by `ftbound probe --torch` into the system file's runtime_rss; 0 where not measured).
    res.cuda_context_bytes = dev.kind == DeviceKind::gpu ? dev.cuda_context_bytes : dev.runtime_rss_bytes;
    res.device_used_bytes = res.reserved_peak_bytes + res.cuda_context_bytes + res.comm_buffer_bytes;
    res.breakdown.overhead_bytes = res.device_used_bytes - res.allocated_peak_bytes;
}

BandParts band_parts(const MemoryBreakdown& b, double total_bytes) {
    return {b.weights_bytes + b.gradients_bytes + b.optimizer_bytes, b.activations_bytes + b.logits_bytes,
            b.temporary_bytes + b.overhead_bytes, total_bytes};
}

BandParts band_parts(const MemoryResult& res, MemoryFigure figure) {
    MemoryBreakdown parts = res.breakdown;
    switch (figure) {
        case MemoryFigure::device_used: return band_parts(parts, res.device_used_bytes);
        case MemoryFigure::reserved_peak:
            parts.overhead_bytes = res.reserved_peak_bytes - res.allocated_peak_bytes;
            return band_parts(parts, res.reserved_peak_bytes);
        case MemoryFigure::allocated_peak: break;
    }
    parts.overhead_bytes = 0;
    return band_parts(parts, res.allocated_peak_bytes);
}

Band uncertainty_band(const BandParts& p, const BandFractions& f) {
    const double half = f.state * p.state_bytes + f.saved * p.saved_bytes + f.overhead * p.overhead_bytes;
    const double w = std::min(half, kMaxBandHalfWidth * p.total_bytes);
    return {w, w};
}

std::pair<double, double> figure_band_bytes(const MemoryResult& res, MemoryFigure figure) {
    const BandParts parts = band_parts(res, figure);
    const Band band = uncertainty_band(parts);
    return {parts.total_bytes - band.below, parts.total_bytes + band.above};
}

void decide_fit(MemoryResult& res) {
    // On CPU servers capacity_bytes is one socket's share of the host RAM (one process per socket).
    const double need = res.device_used_bytes;
    const Band band = uncertainty_band(band_parts(res, MemoryFigure::device_used));
    res.band_low_bytes = need - band.below;
    res.band_high_bytes = need + band.above;
    res.margin_bytes = res.capacity_bytes - need;
    // A figure at or above the capacity is never a plain fit: the band's upper edge must stay below it.
    if (res.band_high_bytes < res.capacity_bytes) res.verdict = MemoryVerdict::fits;
    else if (res.band_low_bytes > res.capacity_bytes) res.verdict = MemoryVerdict::does_not_fit;
    else res.verdict = MemoryVerdict::tight;
    res.fits = res.verdict != MemoryVerdict::does_not_fit;
}

}  // namespace ftb
