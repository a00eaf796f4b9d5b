#include "validate/predict.hpp"

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "memory/device_memory.hpp"

namespace ftb {

namespace {

double bytes_in(const Job& job, double bytes, const std::string& unit) {
    if (unit == "GiB") return bytes / 1073741824.0;
    if (unit == "GB") return bytes / 1e9;
    if (unit == "MiB") return bytes / 1048576.0;
    if (unit == "bytes" || unit == "B") return bytes;
    throw InputError(job.spec.file, "unit", "memory quantities take GiB, GB, MiB or bytes, not '" + unit + "'");
}

std::optional<MemoryFigure> memory_figure(const std::string& q) {
    if (q == "allocated_peak" || q == "typical_step_allocated_peak") return MemoryFigure::allocated_peak;
    if (q == "reserved_peak") return MemoryFigure::reserved_peak;
    if (q == "device_used") return MemoryFigure::device_used;
    return std::nullopt;
}

double figure_bytes(const MemoryResult& m, MemoryFigure f) {
    switch (f) {
        case MemoryFigure::allocated_peak: return m.allocated_peak_bytes;
        case MemoryFigure::reserved_peak: return m.reserved_peak_bytes;
        case MemoryFigure::device_used: return m.device_used_bytes;
    }
    return 0;
}

}  // namespace

std::optional<double> predict_quantity(const Job& job, const std::string& q, const std::string& unit, std::string& why,
                                       std::optional<PredictedBand>* band) {
    if (const auto figure = memory_figure(q)) {
        // A source that logs one step's peak of unpacked data measured a typical step.
        const std::optional<Job> typical = q == "typical_step_allocated_peak" ? typical_step_job(job) : std::nullopt;
        const MemoryResult m = plan_memory(typical ? *typical : job);
        const auto [low, high] = figure_band_bytes(m, *figure);
        if (band) *band = PredictedBand{bytes_in(job, low, unit), bytes_in(job, high, unit), band_parts(m, *figure)};
        return bytes_in(job, figure_bytes(m, *figure), unit);
    }
    if (q == "max_seq_len") return double(max_seq_len(job));
    const MemoryResult mem = plan_memory(job);
    const TimeResult t = plan_time(job, mem);
    if (q == "step_seconds") return t.step_seconds;
    // One micro-batch per DP rank, as logs that print "iter time" report it (the optimizer step amortised).
    if (q == "iteration_seconds") return t.step_seconds / double(job.spec.grad_accumulation());
    if (q == "tokens_per_second") return t.tokens_per_second;
    if (q == "tokens_per_second_per_gpu") return t.tokens_per_second_per_gpu;
    // Published MFUs use the pre-training convention (6N + attention per token).
    if (q == "mfu") return t.mfu_6n;
    why = "unknown quantity";
    return std::nullopt;
}

}  // namespace ftb
