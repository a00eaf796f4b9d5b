// Leave one source out: the accuracy a new framework or publication can expect. Every calibrated setting (a value
// fitted to the public cases, marked CALIBRATED where it lives) is one registered fit: which cases it is fitted on,
// the range its value may take, its neutral (uncalibrated) value. For every source S the settings are refitted on
// the cases of the other sources and S's cases are predicted with those refits; a setting no other source can fit
// stays at its neutral value (as for a framework or GPU the fit has never seen).
//
// Every setting here is fitted the same way: to the value at which the median log error of its cases is zero
// (half predicted too fast, half too slow; the median so that cases missed for other reasons do not pull it), by
// bisection; a larger value makes every prediction slower. Settings that touch the same cases (the matmul factor
// and LitGPT's host overheads on LitGPT's step rows) are fitted in turn, each with the others at their current
// values, from neutral until no value moves by more than kFitTolerance.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "validate/band_fit.hpp"
#include "validate/validation.hpp"

namespace ftb {

// A case with its job loaded once (the fits re-plan it many times).
struct LoadedCase {
    ValidationCase c;
    std::string cases_file;   // the cases file it was read from
    std::string source;       // its leave-out group (leave_out_sources)
    std::optional<Job> job;   // nullopt when the job file could not be read (`error` says why)
    std::string error;
};

// One setting's fitted values by key (the matmul factor: per GPU architecture; a single value: key ""). A key with
// no fitting case is absent, and takes the neutral value.
using FitValues = std::map<std::string, double>;
// Every setting's fitted values, by setting name.
using Calibration = std::map<std::string, FitValues>;
// A case planned with a calibration (CaseResult::predicted empty, with `skipped`, when it is not predicted).
using CasePredictor = std::function<CaseResult(const LoadedCase&, const Calibration&)>;

struct CalibratedSetting {
    std::string name;       // as the report names it
    std::string lives_in;   // where the fitted value is kept
    double neutral = 0;     // the uncalibrated value
    double low = 0, high = 0;   // the bisection's range
    bool log_scale = false;     // bisect on the logarithm (a factor) or the value (a time)
    // The key a case fits this setting under; nullopt: the case does not fit it.
    std::function<std::optional<std::string>(const LoadedCase&)> fit_key;
    // Sets the setting on a job from its fitted values (a key absent: the neutral value).
    std::function<void(Job&, const FitValues&)> apply;
};

// Fitting stops when no value moves by more than this fraction of itself (of the range for a value at 0).
inline constexpr double kFitTolerance = 1e-3;

// The value of `setting` under `key` at which the median throughput-signed log error of `cases` is zero, the other
// settings (and other keys) at `others`.
double fit_setting_value(const CalibratedSetting& setting, const std::vector<const LoadedCase*>& cases,
                         const Calibration& others, const CasePredictor& predict, const std::string& key);

struct FitOutcome {
    Calibration values;
    std::map<std::string, std::map<std::string, int>> cases;   // per setting and key: the cases it was fitted on
    int passes = 0;
};
// Every setting fitted on `pool` (from neutral, in turn, until no value moves).
FitOutcome fit_settings(const std::vector<CalibratedSetting>& settings, const std::vector<const LoadedCase*>& pool,
                        const CasePredictor& predict);

// The leave-out group of each case-id source (case_source): releases of one publication, the same prefix followed
// by a different four-digit YYMM release (mbridge2509, mbridge2511, mbridge2602), are one source (mbridge) when
// more than one release is in the pool; every other prefix is its own source.
std::map<std::string, std::string> leave_out_sources(const std::vector<std::string>& case_sources);

struct SourceRefit {
    std::string source;
    FitOutcome fit;                      // the settings fitted without this source
    std::vector<std::string> fell_back;  // "setting[key]" fitted in-sample that no other source can fit: neutral
};

struct LeaveOutResult {
    FitOutcome in_sample;                // fitted on every source
    std::vector<SourceRefit> refits;     // per source, in order of first appearance
    // Every case three ways: with the in-sample fit, with its source's refit, with every setting neutral. The
    // memory figures' bands: the fractions fitted in-sample (band_fit.hpp), and refitted without the source.
    std::vector<CaseResult> in_sample_results, left_out_results, uncalibrated_results;
    BandFractions band_in_sample;
    std::map<std::string, BandFractions> band_without;   // per source
};

// The whole leave-one-source-out run. `band_target_share`: the share of memory cases the band's fit holds.
LeaveOutResult leave_one_source_out(const std::vector<LoadedCase>& cases, const std::vector<CalibratedSetting>& settings,
                                    const CasePredictor& predict, double band_target_share);

// One source's figures on one quantity three ways (the same cases, source, quantity and qualities).
struct LeaveOutSummary {
    std::string cases_file;
    QuantitySummary left_out, in_sample, uncalibrated;
};
// Per cases file, per source (leave-out group) in order of appearance, per quantity and qualities (summarise()).
std::vector<LeaveOutSummary> summarise_leave_out(const LeaveOutResult& result, const std::vector<LoadedCase>& cases);

// The results' band reset to `fractions` around the prediction (memory figures that carry band parts).
void set_band(CaseResult& r, const BandFractions& fractions);

}  // namespace ftb
