// The verdict (CONTRACT.md memory.verdict): fits / tight / does_not_fit from the uncertainty band around
// the device-used figure; the band's width per kind of bytes (src/memory/device_memory.cpp), worked by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "memory/device_memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

TEST(MemoryVerdict, BandAddsTheUncertaintyOfEachKind) {
    // 2% of state (100 + 50 + 50 = 200 -> 4), 10% of activations + logits (300 + 100 -> 40),
    // 25% of temporaries + overhead (40 + 60 -> 25): 69 of a 700-byte figure, below the 10% cap (70).
    MemoryBreakdown b;
    b.weights_bytes = 100;
    b.gradients_bytes = 50;
    b.optimizer_bytes = 50;
    b.activations_bytes = 300;
    b.logits_bytes = 100;
    b.temporary_bytes = 40;
    b.overhead_bytes = 60;
    const BandFractions fractions{0.02, 0.10, 0.25};
    const Band band = uncertainty_band(band_parts(b, 700), fractions);
    EXPECT_DOUBLE_EQ(band.below, 69);
    EXPECT_DOUBLE_EQ(band.above, 69);
    // The same parts against a 600-byte figure hit the cap: ±60.
    EXPECT_DOUBLE_EQ(uncertainty_band(band_parts(b, 600), fractions).above, 60);
}

// The tiny job on an H100 whose memory is set to `capacity` bytes.
MemoryResult on_capacity(double capacity) {
    Job job = tiny_job();
    job.system.device.memory_bytes = capacity;
    return plan_memory(job);
}

TEST(MemoryVerdict, AFitAtFullCapacityIsTight) {
    const double used = plan_memory(tiny_job()).device_used_bytes;
    const MemoryResult exact = on_capacity(used);
    EXPECT_EQ(exact.verdict, MemoryVerdict::tight);
    EXPECT_TRUE(exact.fits);
    EXPECT_DOUBLE_EQ(exact.margin_bytes, 0);
    EXPECT_LT(exact.band_low_bytes, used);
    EXPECT_GT(exact.band_high_bytes, used);
}

TEST(MemoryVerdict, FitsOnlyWhenTheWholeBandIsBelowCapacity) {
    const MemoryResult base = plan_memory(tiny_job());
    EXPECT_EQ(on_capacity(base.band_high_bytes * 1.001).verdict, MemoryVerdict::fits);
    EXPECT_EQ(on_capacity(base.band_high_bytes).verdict, MemoryVerdict::tight);
    EXPECT_EQ(on_capacity(base.band_low_bytes).verdict, MemoryVerdict::tight);
    const MemoryResult over = on_capacity(base.band_low_bytes * 0.999);
    EXPECT_EQ(over.verdict, MemoryVerdict::does_not_fit);
    EXPECT_FALSE(over.fits);
    EXPECT_LT(over.margin_bytes, 0);
}

TEST(MemoryVerdict, TextSaysTheMarginAndOverBy) {
    const auto fits = spec_test::run_ftbound({"plan", example("llama3.1-8b-lora-r760xa.yaml")});
    ASSERT_EQ(fits.exit_code, 0) << spec_test::describe(fits);
    EXPECT_NE(fits.out.find("GiB to spare"), std::string::npos) << fits.out;
    const auto over = spec_test::run_ftbound({"plan", example("llama3.1-70b-full-8xh100-unsharded.yaml")});
    ASSERT_EQ(over.exit_code, 0) << spec_test::describe(over);
    EXPECT_NE(over.out.find("DOES NOT FIT"), std::string::npos);
    EXPECT_NE(over.out.find("over by "), std::string::npos) << over.out;
}

}  // namespace
}  // namespace ftb
