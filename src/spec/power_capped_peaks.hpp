// A device variant held to a board power limit below its base part's rating (nvidia-smi -pl; a server that caps
// its GPUs, e.g. Meta's Grand Teton H100 at 500 W): its tensor cores run at the clocks the limit sustains, so its
// dense peaks are the base's scaled by the power-capped clock (ops/power.hpp power_capped_rate_factor).
#pragma once
#include "ftbound/system_spec.hpp"

namespace ftb {

// The peaks of `base` at the clocks a `cap_w` board limit sustains while running dense matmuls, which draw the
// base's rated power at its rated clocks. A cap at or above the rating leaves the peaks as they are.
PeakTflops power_capped_peaks(const DeviceSpec& base, double cap_w);

// The tensor-core clock a `cap_w` board limit sustains on `base`, as a fraction of its rated clock (the factor
// power_capped_peaks applies): 1 when the cap does not bind or the base has no rating.
double power_capped_clock_fraction(const DeviceSpec& base, double cap_w);

}  // namespace ftb
