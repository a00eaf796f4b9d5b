#include "validate/band_fit.hpp"

#include <algorithm>
#include <cmath>

namespace ftb {

namespace {

// The grid searched per kind: wide enough that each cap (kMaxBandHalfWidth) binds before the grid ends.
constexpr int kStateSteps = 30;     // 0 to 15% in 0.5% steps
constexpr double kStateStep = 0.005;
constexpr int kSavedSteps = 40;     // 0 to 40% in 1% steps
constexpr double kSavedStep = 0.01;
constexpr int kOverheadSteps = 20;  // 0 to 100% in 5% steps
constexpr double kOverheadStep = 0.05;

double half_width_fraction(const BandCase& c, const BandFractions& f) {
    if (c.parts.total_bytes <= 0) return 0;
    return uncertainty_band(c.parts, f).above / c.parts.total_bytes;
}

bool is_memory_quantity(const std::string& q) {
    return q == "allocated_peak" || q == "typical_step_allocated_peak" || q == "reserved_peak" || q == "device_used";
}

// Better: holds more cases when neither reaches the target; else the narrower of those that do.
bool better(const BandFit& a, const BandFit& b, double target_share) {
    const bool a_ok = a.held >= target_share * a.cases, b_ok = b.held >= target_share * b.cases;
    if (a_ok != b_ok) return a_ok;
    if (!a_ok && a.held != b.held) return a.held > b.held;
    return a.mean_half_width < b.mean_half_width;
}

}  // namespace

std::vector<BandCase> band_cases(const std::vector<CaseResult>& results) {
    std::vector<BandCase> out;
    for (const auto& r : results) {
        if (!is_memory_quantity(r.c.quantity) || r.c.quality == "low" || !r.predicted || !r.band_parts) continue;
        if (*r.predicted <= 0) continue;
        out.push_back({r.c.id, case_source(r.c.id), *r.band_parts, std::abs(*r.predicted - r.c.measured) / *r.predicted});
    }
    return out;
}

BandFit evaluate_band(const std::vector<BandCase>& cases, const BandFractions& fractions) {
    BandFit fit;
    fit.fractions = fractions;
    std::vector<double> widths;
    for (const auto& c : cases) {
        const double w = half_width_fraction(c, fractions);
        widths.push_back(w);
        ++fit.cases;
        // A relative tolerance so that a case exactly on the band's edge counts as inside, as in_band() does.
        if (c.needed_half_width <= w * (1 + 1e-9)) ++fit.held;
        fit.mean_half_width += w;
    }
    if (fit.cases > 0) fit.mean_half_width /= fit.cases;
    fit.median_half_width = median(widths);
    return fit;
}

BandFit fit_band(const std::vector<BandCase>& cases, double target_share) {
    BandFit best = evaluate_band(cases, {});
    for (int s = 0; s <= kStateSteps; ++s)
        for (int a = 0; a <= kSavedSteps; ++a)
            for (int o = 0; o <= kOverheadSteps; ++o) {
                const BandFit f = evaluate_band(cases, {s * kStateStep, a * kSavedStep, o * kOverheadStep});
                if (better(f, best, target_share)) best = f;
            }
    return best;
}

std::vector<BandSourceCheck> band_leave_one_source_out(const std::vector<BandCase>& cases, double target_share) {
    std::vector<std::string> sources;
    for (const auto& c : cases)
        if (std::find(sources.begin(), sources.end(), c.source) == sources.end()) sources.push_back(c.source);
    std::vector<BandSourceCheck> out;
    for (const auto& source : sources) {
        std::vector<BandCase> others, own;
        for (const auto& c : cases) (c.source == source ? own : others).push_back(c);
        BandSourceCheck check;
        check.source = source;
        check.fitted_without = fit_band(others, target_share);
        check.held_out = evaluate_band(own, check.fitted_without.fractions);
        out.push_back(check);
    }
    return out;
}

}  // namespace ftb
