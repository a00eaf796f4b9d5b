// A typical step of unpacked data: the job with each sequence padded to the length a typical micro-batch is padded
// to (JobSpec::expected_padded_seq_len), not to the longest one the job allows.
#include <cmath>

#include "ftbound/memory.hpp"

namespace ftb {

std::optional<Job> typical_step_job(const Job& job) {
    const JobSpec& js = job.spec;
    // Packed or without avg_seq_len the expected length is seq_len, which no padded length exceeds.
    const double typical_len = js.expected_padded_seq_len();
    if (typical_len >= double(js.padded_seq_len())) return std::nullopt;
    Job typical = job;
    // padded_seq_len() then pads to this length (rounded up to a multiple of cp), as for a longest sample.
    typical.spec.data.max_sample_tokens = std::max<int64_t>(1, int64_t(std::ceil(typical_len)));
    return typical;
}

double typical_step_allocated_peak_bytes(const Job& job, const MemoryResult& worst) {
    const std::optional<Job> typical = typical_step_job(job);
    return typical ? plan_memory(*typical).allocated_peak_bytes : worst.allocated_peak_bytes;
}

}  // namespace ftb
