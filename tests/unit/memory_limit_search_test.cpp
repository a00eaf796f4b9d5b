// The limit search (memory/limit_search.hpp) on margin curves given as formulas: it must return exactly what a
// scan from the bottom returns, for affine, convex and stepped margins, steps other than 1 and caps that are not a
// multiple of the step, and take few probes on the near-affine curves memory gives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>

#include "memory/limit_search.hpp"

namespace ftb {
namespace {

// The reference: the largest multiple of step in [step, cap] that fits, found one multiple at a time (the margins
// below fall as x grows, so the first that does not fit ends it); cap when cap fits.
int64_t scan(int64_t step, int64_t cap, const std::function<double(int64_t)>& margin) {
    if (margin(cap) >= 0) return cap;
    int64_t last = 0;
    for (int64_t x = step; x <= cap && margin(x) >= 0; x += step) last = x;
    return last;
}

struct Counted {
    std::function<double(int64_t)> margin;
    int probes = 0;
    std::function<double(int64_t)> fn() {
        return [this](int64_t x) {
            ++probes;
            return margin(x);
        };
    }
};

TEST(LimitSearch, AffineMarginTakesFewProbes) {
    // 80 GB of capacity, 20 GB fixed, 1.5 MB per token: the boundary is 40,000 tokens.
    Counted c{[](int64_t x) { return 80e9 - 20e9 - 1.5e6 * double(x); }};
    EXPECT_EQ(largest_fitting(1, int64_t(1) << 24, c.fn()), 40000);
    EXPECT_LE(c.probes, 8);   // bisection from 1 took 31
}

TEST(LimitSearch, ConvexMarginMatchesTheScan) {
    // Attention kept as a full score matrix: bytes grow with the square of the length.
    const auto margin = [](int64_t x) { return 40e9 - 2e9 - 3e5 * double(x) - 24.0 * double(x) * double(x); };
    Counted c{margin};
    EXPECT_EQ(largest_fitting(1, int64_t(1) << 24, c.fn()), scan(1, int64_t(1) << 24, margin));
    EXPECT_LE(c.probes, 16);
}

TEST(LimitSearch, SteppedMarginMatchesTheScan) {
    // Allocator rounding: the margin falls in 2 MiB stairs, flat in between.
    const auto margin = [](int64_t x) {
        const double need = std::ceil((1e9 + 7.3e5 * double(x)) / 2097152.0) * 2097152.0;
        return 24e9 - need;
    };
    EXPECT_EQ(largest_fitting(1, int64_t(1) << 20, margin), scan(1, int64_t(1) << 20, margin));
}

TEST(LimitSearch, StepsAndCapsThatAreNotMultiples) {
    for (const int64_t step : {1, 2, 3, 8, 16}) {
        for (const double per : {1e3, 7.7e5, 3e7, 9e8}) {
            const auto margin = [per](int64_t x) { return 64e9 - per * double(x); };
            for (const int64_t cap : {int64_t(100), int64_t(1000), int64_t(1) << 16}) {
                SCOPED_TRACE(testing::Message() << "step " << step << ", bytes per unit " << per << ", cap " << cap);
                EXPECT_EQ(largest_fitting(step, cap, margin), scan(step, cap, margin));
            }
        }
    }
}

TEST(LimitSearch, NothingFitsOrEverythingFits) {
    EXPECT_EQ(largest_fitting(4, 1 << 20, [](int64_t) { return -1.0; }), 0);
    EXPECT_EQ(largest_fitting(1, 1 << 20, [](int64_t) { return 1.0; }), 1 << 20);
    // Exactly zero margin fits.
    EXPECT_EQ(largest_fitting(1, 1000, [](int64_t x) { return 500.0 - double(x); }), 500);
}

TEST(LimitSearch, FlatThenFallingMarginMatchesTheScan) {
    // Nothing grows until a threshold (a fixed buffer covers small inputs), then the margin falls at once: the line
    // through two flat points has no zero, so the search must fall back to doubling and bisecting.
    const auto margin = [](int64_t x) { return x < 3000 ? 5e9 : 5e9 - 1e6 * double(x - 3000); };
    EXPECT_EQ(largest_fitting(1, 1 << 24, margin), scan(1, 1 << 24, margin));
}

}  // namespace
}  // namespace ftb
