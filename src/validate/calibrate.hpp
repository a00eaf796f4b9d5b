// The one tool that fits the matmul time factor (FrameworkProfile::matmul_time_factor, data/frameworks/*.yaml) on
// public cases, and measures how well it carries to a source it was not fitted on.
//
// Fitted: one factor per GPU architecture, shared by every framework profile that opts in (declares a factor for
// that architecture), chosen so that half the time cases (tokens/s, step seconds, MFU) of that architecture are
// predicted too fast and half too slow (median log error zero). An architecture without cases gets no factor. Leave-one-source-out: for each source, fit on
// the other sources and predict this one; a source that is the only one on its architecture is then predicted
// uncalibrated (factor 1), as a new framework or GPU would be.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "validate/validation.hpp"

namespace ftb {

struct FactorFit {
    std::map<std::string, double> factor;   // per architecture name
    std::map<std::string, int> cases;       // time cases each factor was fitted on
};

// Time cases (tokens/s, step seconds, MFU; quality high or medium) whose framework opts in to the factor.
bool is_fit_case(const ValidationCase& c);
// Fits the factor on `cases`, leaving out those of `left_out` (a case-id source; empty: none).
FactorFit fit_matmul_factor(const std::vector<ValidationCase>& cases, const std::string& csv_dir,
                            const std::string& left_out);

struct SourceFit {
    std::string source, quantity;
    int cases = 0;
    double mape_in_sample = 0;      // factor fitted on every source
    double mape_uncalibrated = 0;   // factor 1
    double mape_left_out = 0;       // factor fitted without this source
    FactorFit fit_left_out;         // the factors fitted without this source
};
// In-sample, uncalibrated and leave-one-source-out MAPE per source and quantity, over the fit cases.
std::vector<SourceFit> leave_one_source_out(const std::vector<ValidationCase>& cases, const std::string& csv_dir,
                                            FactorFit& in_sample);

}  // namespace ftb
