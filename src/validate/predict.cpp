#include "validate/predict.hpp"

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"

namespace ftb {

std::optional<double> predict_quantity(const Job& job, const std::string& q, const std::string& unit, std::string& why) {
    auto bytes_in = [&](double bytes) -> std::optional<double> {
        if (unit == "GiB") return bytes / 1073741824.0;
        if (unit == "GB") return bytes / 1e9;
        if (unit == "MiB") return bytes / 1048576.0;
        if (unit == "bytes" || unit == "B") return bytes;
        throw InputError(job.spec.file, "unit", "memory quantities take GiB, GB, MiB or bytes, not '" + unit + "'");
    };
    if (q == "allocated_peak") return bytes_in(plan_memory(job).allocated_peak_bytes);
    if (q == "reserved_peak") return bytes_in(plan_memory(job).reserved_peak_bytes);
    if (q == "device_used") return bytes_in(plan_memory(job).device_used_bytes);
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
