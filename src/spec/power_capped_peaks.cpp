// Peaks of a power-capped variant: see power_capped_peaks.hpp.
#include "spec/power_capped_peaks.hpp"

#include "ops/power.hpp"

namespace ftb {

// Dense matmuls at the rated clocks draw the part's rated board power: the H100 SXM runs "up to 700 W" (NVIDIA
// H100 datasheet, SXM column) at the 1830 MHz boost its dense peaks are stated at (H100 architecture whitepaper).
// Below that limit the clocks drop along the cube law of power_capped_rate_factor (dynamic power ~ f V^2, V ~ f);
// HBM runs on its own clock and keeps its bandwidth.
double power_capped_clock_fraction(const DeviceSpec& base, double cap_w) {
    return base.tdp_w > 0 ? power_capped_rate_factor(base, cap_w) : 1.0;
}

PeakTflops power_capped_peaks(const DeviceSpec& base, double cap_w) {
    const double f = power_capped_clock_fraction(base, cap_w);
    PeakTflops p = base.peak_tflops;
    p.fp32 *= f, p.tf32 *= f, p.fp16 *= f, p.bf16 *= f, p.fp8 *= f;
    return p;
}

}  // namespace ftb
