// spec/power_capped_peaks: a variant capped below its base's rating runs its tensor cores at the cube-law clock.
#include "spec/power_capped_peaks.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace ftb {
namespace {

DeviceSpec part() {
    DeviceSpec d;
    d.tdp_w = 700, d.idle_w = 70;
    d.peak_tflops = PeakTflops{60, 400, 1000, 1000, 2000};
    return d;
}

TEST(PowerCappedPeaks, CapBelowRatingScalesEveryPeakByTheCubeRootOfTheDynamicPowerShare) {
    const PeakTflops p = power_capped_peaks(part(), 500);
    const double f = std::cbrt((500.0 - 70) / (700.0 - 70));   // 0.881
    EXPECT_NEAR(p.bf16, 1000 * f, 1e-9);
    EXPECT_NEAR(p.fp8, 2000 * f, 1e-9);
    EXPECT_NEAR(p.fp32, 60 * f, 1e-9);
    EXPECT_NEAR(p.tf32, 400 * f, 1e-9);
}

TEST(PowerCappedPeaks, CapAtOrAboveRatingLeavesThePeaks) {
    EXPECT_DOUBLE_EQ(power_capped_peaks(part(), 700).bf16, 1000);
    EXPECT_DOUBLE_EQ(power_capped_peaks(part(), 900).bf16, 1000);
}

TEST(PowerCappedPeaks, BaseWithoutARatingIsLeftAsItIs) {
    DeviceSpec d = part();
    d.tdp_w = 0;
    EXPECT_DOUBLE_EQ(power_capped_peaks(d, 500).bf16, 1000);
}

}  // namespace
}  // namespace ftb
