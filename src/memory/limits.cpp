// Largest micro-batch and sequence length that fit: memory grows monotonically with both, so the answer is the
// boundary of a bracket (the largest multiple of `step` that fits, the next one does not). Memory is close to affine
// in either, so each probe follows the margin's line through the bracket's ends (regula falsi, Illinois variant),
// not its midpoint: a search takes about 6 plans instead of 20 to 40, and finds the bisection's answer, since the
// bracket only ever shrinks on what plan_memory says fits.
#include <algorithm>
#include <cmath>

#include "ftbound/memory.hpp"
#include "memory/limit_search.hpp"

namespace ftb {
namespace {

int64_t round_down(int64_t x, int64_t step) { return x - x % step; }

// A point strictly inside (lo, hi), a multiple of step, at fraction t of the way; 0 when there is none.
int64_t probe_between(int64_t lo, int64_t hi, double t, int64_t step) {
    if (!(t >= 0 && t < 1)) t = 0.5;   // a non-finite margin: bisect
    const int64_t at = round_down(lo + int64_t(t * double(hi - lo)), step);
    const int64_t inside = std::max(at, lo + step);
    return inside < hi ? inside : 0;
}

}  // namespace

int64_t largest_fitting(int64_t step, int64_t cap, const std::function<double(int64_t)>& margin) {
    double m_lo = margin(step);
    if (!(m_lo >= 0)) return 0;
    int64_t lo = step, prev = 0;
    double m_prev = 0;
    // Bracket: past the zero of the line through the last two fitting points (an eighth beyond, so the probe lands
    // past a margin that falls faster than linearly), else double.
    int64_t hi = 0;
    double m_hi = 0;
    while (hi == 0) {
        if (lo >= cap) return cap;
        int64_t next = std::min(cap, lo * 2);
        if (prev > 0 && m_prev > m_lo) {
            const double zero = double(lo) + m_lo * double(lo - prev) / (m_prev - m_lo);
            if (std::isfinite(zero))
                next = std::min(cap, std::max(lo + step, round_down(int64_t(std::min(zero * 1.125, double(cap))), step)));
        }
        const double m = margin(next);
        if (m >= 0) prev = lo, m_prev = m_lo, lo = next, m_lo = m;
        else hi = next, m_hi = m;
    }
    // Shrink the bracket; an end kept twice in a row has its margin halved, so the line tilts towards it.
    int kept = 0;   // +1: hi was kept last time, -1: lo was
    while (const int64_t mid = probe_between(lo, hi, m_lo / (m_lo - m_hi), step)) {
        const double m = margin(mid);
        if (m >= 0) {
            lo = mid, m_lo = m;
            if (kept == 1) m_hi /= 2;
            kept = 1;
        } else {
            hi = mid, m_hi = m;
            if (kept == -1) m_lo /= 2;
            kept = -1;
        }
    }
    return lo;
}

int64_t max_micro_batch(const Job& job) {
    Job trial = job;
    return largest_fitting(1, int64_t(1) << 20, [&](int64_t mb) {
        trial.spec.train.micro_batch = mb;
        return plan_memory(trial).margin_bytes;
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
        trial.spec.train.avg_seq_len = std::min<double>(job.spec.train.avg_seq_len, double(seq));
        return plan_memory(trial).margin_bytes;
    });
}

}  // namespace ftb
