// Largest micro-batch and sequence length that fit: memory grows monotonically with both, so bisect.
#include <algorithm>

#include "ftbound/memory.hpp"

namespace ftb {
namespace {

template <typename Fits>
int64_t largest_fitting(int64_t step, int64_t cap, Fits fits) {
    if (!fits(step)) return 0;
    int64_t lo = step, hi = step;
    while (hi < cap && fits(std::min(cap, hi * 2))) {
        lo = std::min(cap, hi * 2);
        hi = lo;
    }
    if (hi >= cap) return cap;
    hi = std::min(cap, hi * 2);   // hi does not fit
    while (hi - lo > step) {
        int64_t mid = lo + (hi - lo) / 2;
        mid -= mid % step;
        if (mid <= lo) break;
        if (fits(mid)) lo = mid;
        else hi = mid;
    }
    return lo;
}

}  // namespace

int64_t max_micro_batch(const Job& job) {
    Job trial = job;
    return largest_fitting(1, int64_t(1) << 20, [&](int64_t mb) {
        trial.spec.train.micro_batch = mb;
        return within_capacity(plan_memory(trial));
    });
}

int64_t max_seq_len(const Job& job) {
    Job trial = job;
    // Context parallelism splits the sequence: lengths come in multiples of cp.
    const int64_t step = trial.spec.parallel.cp;
    // The longest padded length that fits: batches fill seq_len, whatever the data's longest sample (with it, the
    // padded length would stop at data.max_sample_tokens and any seq_len would fit).
    trial.spec.data.max_sample_tokens = 0;
    return largest_fitting(step, int64_t(1) << 24, [&](int64_t seq) {
        trial.spec.train.seq_len = seq;
        trial.spec.train.avg_seq_len = std::min<double>(trial.spec.train.avg_seq_len, double(seq));
        return within_capacity(plan_memory(trial));
    });
}

}  // namespace ftb
