// One stream's expandable segment of the CUDA caching allocator (src/memory/device_segment.hpp): best fit, split
// at the block's start, merge with free neighbours, grow at the end; every figure worked out by hand.
#include <gtest/gtest.h>

#include "memory/device_segment.hpp"

namespace ftb {
namespace {

constexpr double kMiB = 1048576;

TEST(DeviceSegment, RoundsToHalfKibibyteBlocks) {
    DeviceSegment seg;
    seg.allocate(1);
    seg.allocate(513);
    EXPECT_DOUBLE_EQ(seg.mapped_bytes(), 512 + 1024);
    EXPECT_DOUBLE_EQ(seg.live_bytes(), 1536);
}

TEST(DeviceSegment, TorchtitanLossLeavesTheLogitsHole) {
    // bf16 logits L = 2 MiB, fp32 copy C = 4, log-softmax output O = 4 at [6, 10); C and L freed -> one free
    // block [0, 6). nll_loss's gradient (4) takes [0, 4), leaving [4, 6); log_softmax's gradient (4) fits nowhere
    // and the segment grows to 14. Live at most O + two gradients = 12: 2 MiB mapped beyond the live peak.
    DeviceSegment seg;
    const int logits = seg.allocate(2 * kMiB);
    const int upcast = seg.allocate(4 * kMiB);
    const int out = seg.allocate(4 * kMiB);
    seg.release(upcast);
    seg.release(logits);
    const int g1 = seg.allocate(4 * kMiB);
    seg.allocate(4 * kMiB);
    EXPECT_DOUBLE_EQ(seg.mapped_bytes(), 14 * kMiB);
    EXPECT_DOUBLE_EQ(seg.peak_live_bytes(), 12 * kMiB);
    // O and g1 freed merge with the hole [4, 6) into [0, 10): the bf16 gradient reuses its start.
    seg.release(out);
    seg.release(g1);
    seg.allocate(2 * kMiB);
    EXPECT_DOUBLE_EQ(seg.mapped_bytes(), 14 * kMiB);
}

TEST(DeviceSegment, BestFitPrefersTheSmallestHoleAndAFreeTailGrows) {
    // [a 3][b 1][c 2][d 1] MiB. Freeing a and c leaves holes of 3 at 0 and 2 at 4: a 2 MiB request takes the
    // 2 MiB hole (best fit, not the first), a 3 MiB one the other; nothing grows (7). Freeing d leaves the tail
    // [6, 7) free, so the next 3 MiB request extends it to [6, 9) rather than mapping 3 MiB more after it.
    DeviceSegment seg;
    const int a = seg.allocate(3 * kMiB);
    seg.allocate(1 * kMiB);
    const int c = seg.allocate(2 * kMiB);
    const int d = seg.allocate(1 * kMiB);
    seg.release(a);
    seg.release(c);
    seg.allocate(2 * kMiB);
    seg.allocate(3 * kMiB);
    EXPECT_DOUBLE_EQ(seg.mapped_bytes(), 7 * kMiB);
    seg.release(d);
    seg.allocate(3 * kMiB);
    EXPECT_DOUBLE_EQ(seg.mapped_bytes(), 9 * kMiB);
    EXPECT_DOUBLE_EQ(seg.live_bytes(), 9 * kMiB);
}

}  // namespace
}  // namespace ftb
