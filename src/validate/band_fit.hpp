// The one tool that fits the memory band (kBandFractions, memory/device_memory.hpp) on measured cases, and checks
// how well a band fitted without a source holds that source's peaks.
//
// A case's band is the sum over its kinds of bytes (state, saved, overhead) of the kind's fraction times its bytes,
// capped at kMaxBandHalfWidth of the figure; it holds the case when |predicted - measured| <= that half-width.
// Fitted: the fractions, on a grid, with the smallest mean half-width among those that hold at least the target
// share of the cases (or, where no grid point reaches it, the most cases). Only memory cases of quality high and
// medium count, as for the pins.
#pragma once
#include <string>
#include <vector>

#include "memory/device_memory.hpp"
#include "validate/validation.hpp"

namespace ftb {

struct BandCase {
    std::string id, source;
    BandParts parts;              // the predicted figure's bytes by kind
    double needed_half_width = 0; // |predicted - measured| / predicted: the narrowest band that holds the case
};

// The memory cases (quality high or medium) of `results` that carry a band.
std::vector<BandCase> band_cases(const std::vector<CaseResult>& results);

struct BandFit {
    BandFractions fractions;
    int cases = 0, held = 0;        // cases, and those whose measured peak lies inside the band
    double mean_half_width = 0;     // of the figure
    double median_half_width = 0;
};

// How the band of `fractions` does on `cases`.
BandFit evaluate_band(const std::vector<BandCase>& cases, const BandFractions& fractions);
// The narrowest fractions (mean half-width) that hold at least `target_share` of `cases`.
BandFit fit_band(const std::vector<BandCase>& cases, double target_share);

struct BandSourceCheck {
    std::string source;
    BandFit fitted_without;   // fitted on the other sources (its counts are over them)
    BandFit held_out;         // those fractions on this source's cases
};
// For each source (case-id prefix), in order of appearance: fit on the others, evaluate on it.
std::vector<BandSourceCheck> band_leave_one_source_out(const std::vector<BandCase>& cases, double target_share);

}  // namespace ftb
