// Leave one source out (leave_out.hpp).
#include "validate/leave_out.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace ftb {
namespace {

bool is_seconds_quantity(const std::string& q) { return q == "step_seconds" || q == "iteration_seconds"; }

// log(predicted / measured), signed so that it falls when the step gets slower (seconds rise, throughput falls).
std::optional<double> signed_log_error(const LoadedCase& lc, const Calibration& cal, const CasePredictor& predict) {
    const CaseResult r = predict(lc, cal);
    if (!r.predicted || *r.predicted <= 0) return std::nullopt;
    const double e = std::log(*r.predicted / lc.c.measured);
    return is_seconds_quantity(lc.c.quantity) ? -e : e;
}

double median_signed_log_error(const std::vector<const LoadedCase*>& cases, const Calibration& cal,
                               const CasePredictor& predict) {
    std::vector<double> e;
    for (const LoadedCase* lc : cases)
        if (const auto v = signed_log_error(*lc, cal, predict)) e.push_back(*v);
    return median(std::move(e));
}

// Cases per key of a setting, among `pool`.
std::map<std::string, std::vector<const LoadedCase*>> cases_by_key(const CalibratedSetting& s,
                                                                   const std::vector<const LoadedCase*>& pool) {
    std::map<std::string, std::vector<const LoadedCase*>> out;
    for (const LoadedCase* lc : pool)
        if (lc->job)
            if (const auto key = s.fit_key(*lc)) out[*key].push_back(lc);
    return out;
}

bool moved(const CalibratedSetting& s, const FitValues& before, const FitValues& after) {
    for (const auto& [key, v] : after) {
        const auto it = before.find(key);
        const double old = it == before.end() ? s.neutral : it->second;
        const double scale = old != 0 ? std::fabs(old) : s.high - s.low;
        if (std::fabs(v - old) > kFitTolerance * scale) return true;
    }
    return false;
}

// Trailing four-digit release of a case-id prefix (mbridge2509 -> mbridge), or the prefix itself.
std::string release_stem(const std::string& prefix) {
    if (prefix.size() <= 4) return prefix;
    const std::string tail = prefix.substr(prefix.size() - 4);
    const bool digits = std::all_of(tail.begin(), tail.end(), [](unsigned char ch) { return std::isdigit(ch); });
    return digits ? prefix.substr(0, prefix.size() - 4) : prefix;
}

std::vector<const LoadedCase*> pool_without(const std::vector<LoadedCase>& cases, const std::string& source) {
    std::vector<const LoadedCase*> out;
    for (const auto& lc : cases)
        if (lc.source != source) out.push_back(&lc);
    return out;
}

// "setting[key]" of every value fitted in-sample that the refit lacks.
std::vector<std::string> fallbacks(const FitOutcome& in_sample, const FitOutcome& refit) {
    std::vector<std::string> out;
    for (const auto& [name, values] : in_sample.values)
        for (const auto& [key, v] : values) {
            const auto it = refit.values.find(name);
            if (it == refit.values.end() || !it->second.count(key)) out.push_back(key.empty() ? name : name + "[" + key + "]");
        }
    return out;
}

// Does any setting fit a case of `source`? If not, the refit without it is the in-sample fit.
bool source_fits_a_setting(const std::vector<LoadedCase>& cases, const std::vector<CalibratedSetting>& settings,
                           const std::string& source) {
    for (const auto& lc : cases)
        if (lc.source == source && lc.job)
            for (const auto& s : settings)
                if (s.fit_key(lc)) return true;
    return false;
}

std::vector<std::string> sources_in_order(const std::vector<LoadedCase>& cases) {
    std::vector<std::string> out;
    for (const auto& lc : cases)
        if (std::find(out.begin(), out.end(), lc.source) == out.end()) out.push_back(lc.source);
    return out;
}

// The memory cases of `results` whose source is (or, with `others`, is not) `source`, as the band fit takes them.
std::vector<BandCase> band_cases_of(const std::vector<CaseResult>& results, const std::vector<LoadedCase>& cases,
                                    const std::string& source, bool others) {
    std::vector<CaseResult> mine;
    for (size_t i = 0; i < results.size(); ++i)
        if ((cases[i].source == source) != others) mine.push_back(results[i]);
    return band_cases(mine);
}

void fit_bands(LeaveOutResult& out, const std::vector<LoadedCase>& cases, double target_share) {
    const std::vector<BandCase> all = band_cases(out.in_sample_results);
    out.band_in_sample = all.empty() ? BandFractions{} : fit_band(all, target_share).fractions;
    for (const auto& source : sources_in_order(cases)) {
        const std::vector<BandCase> others = band_cases_of(out.left_out_results, cases, source, true);
        const bool own = !band_cases_of(out.left_out_results, cases, source, false).empty();
        if (own) out.band_without[source] = others.empty() ? BandFractions{} : fit_band(others, target_share).fractions;
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        set_band(out.in_sample_results[i], out.band_in_sample);
        const auto it = out.band_without.find(cases[i].source);
        set_band(out.left_out_results[i], it == out.band_without.end() ? out.band_in_sample : it->second);
        set_band(out.uncalibrated_results[i], BandFractions{});
    }
}

}  // namespace

double fit_setting_value(const CalibratedSetting& setting, const std::vector<const LoadedCase*>& cases,
                         const Calibration& others, const CasePredictor& predict, const std::string& key) {
    auto to_value = [&](double x) { return setting.log_scale ? std::exp(x) : x; };
    double lo = setting.log_scale ? std::log(setting.low) : setting.low;
    double hi = setting.log_scale ? std::log(setting.high) : setting.high;
    Calibration cal = others;
    // 24 halvings: a factor's range 1/3..3 to 1e-7 of its logarithm, a 0..20 ms host time to about 1 ns.
    for (int i = 0; i < 24; ++i) {
        const double mid = (lo + hi) / 2;
        cal[setting.name][key] = to_value(mid);
        (median_signed_log_error(cases, cal, predict) > 0 ? lo : hi) = mid;
    }
    return to_value((lo + hi) / 2);
}

FitOutcome fit_settings(const std::vector<CalibratedSetting>& settings, const std::vector<const LoadedCase*>& pool,
                        const CasePredictor& predict) {
    FitOutcome out;
    // Each setting's cases by key, found once; a setting without cases keeps no values (neutral).
    std::vector<std::map<std::string, std::vector<const LoadedCase*>>> keyed;
    for (const auto& s : settings) keyed.push_back(cases_by_key(s, pool));
    constexpr int kMaxPasses = 6;
    bool any_moved = true;
    while (any_moved && out.passes < kMaxPasses) {
        any_moved = false;
        ++out.passes;
        for (size_t i = 0; i < settings.size(); ++i) {
            FitValues values;
            for (const auto& [key, cases] : keyed[i]) {
                values[key] = fit_setting_value(settings[i], cases, out.values, predict, key);
                out.cases[settings[i].name][key] = int(cases.size());
            }
            any_moved = any_moved || moved(settings[i], out.values[settings[i].name], values);
            out.values[settings[i].name] = values;
        }
    }
    return out;
}

std::map<std::string, std::string> leave_out_sources(const std::vector<std::string>& case_sources) {
    std::map<std::string, int> releases;   // distinct prefixes per stem
    std::vector<std::string> seen;
    for (const auto& p : case_sources)
        if (std::find(seen.begin(), seen.end(), p) == seen.end()) seen.push_back(p), ++releases[release_stem(p)];
    std::map<std::string, std::string> out;
    for (const auto& p : seen) out[p] = releases[release_stem(p)] > 1 ? release_stem(p) : p;
    return out;
}

namespace {

std::vector<CaseResult> subset(const std::vector<CaseResult>& results, const std::vector<LoadedCase>& cases,
                               const std::string& file, const std::string& source) {
    std::vector<CaseResult> out;
    for (size_t i = 0; i < cases.size(); ++i)
        if (cases[i].cases_file == file && cases[i].source == source) out.push_back(results[i]);
    return out;
}

const QuantitySummary* matching(const std::vector<QuantitySummary>& rows, const QuantitySummary& s) {
    for (const auto& r : rows)
        if (r.quantity == s.quantity && r.qualities == s.qualities) return &r;
    return nullptr;
}

}  // namespace

std::vector<LeaveOutSummary> summarise_leave_out(const LeaveOutResult& result, const std::vector<LoadedCase>& cases) {
    std::vector<std::pair<std::string, std::string>> groups;   // (cases file, source) in order of appearance
    for (const auto& lc : cases)
        if (std::find(groups.begin(), groups.end(), std::make_pair(lc.cases_file, lc.source)) == groups.end())
            groups.emplace_back(lc.cases_file, lc.source);
    std::vector<LeaveOutSummary> out;
    for (const auto& [file, source] : groups) {
        const auto left_out = summarise(subset(result.left_out_results, cases, file, source));
        const auto in_sample = summarise(subset(result.in_sample_results, cases, file, source));
        const auto uncalibrated = summarise(subset(result.uncalibrated_results, cases, file, source));
        for (const auto& s : left_out) {
            LeaveOutSummary row;
            row.cases_file = file, row.left_out = s;
            if (const auto* i = matching(in_sample, s)) row.in_sample = *i;
            if (const auto* u = matching(uncalibrated, s)) row.uncalibrated = *u;
            for (QuantitySummary* q : {&row.left_out, &row.in_sample, &row.uncalibrated}) q->source = source;
            out.push_back(row);
        }
    }
    return out;
}

void set_band(CaseResult& r, const BandFractions& fractions) {
    if (!r.predicted || !r.band_parts || r.band_parts->total_bytes <= 0) return;
    const Band b = uncertainty_band(*r.band_parts, fractions);
    const double unit_per_byte = *r.predicted / r.band_parts->total_bytes;
    r.band_low = *r.predicted - b.below * unit_per_byte;
    r.band_high = *r.predicted + b.above * unit_per_byte;
}

LeaveOutResult leave_one_source_out(const std::vector<LoadedCase>& cases, const std::vector<CalibratedSetting>& settings,
                                    const CasePredictor& predict, double band_target_share) {
    LeaveOutResult out;
    out.in_sample = fit_settings(settings, pool_without(cases, ""), predict);
    std::map<std::string, const FitOutcome*> refit_of;
    for (const auto& source : sources_in_order(cases)) {
        SourceRefit r;
        r.source = source;
        r.fit = source_fits_a_setting(cases, settings, source) ? fit_settings(settings, pool_without(cases, source), predict)
                                                               : out.in_sample;
        r.fell_back = fallbacks(out.in_sample, r.fit);
        out.refits.push_back(std::move(r));
    }
    for (const auto& r : out.refits) refit_of[r.source] = &r.fit;
    for (const auto& lc : cases) {
        out.in_sample_results.push_back(predict(lc, out.in_sample.values));
        out.left_out_results.push_back(predict(lc, refit_of.at(lc.source)->values));
        out.uncalibrated_results.push_back(predict(lc, Calibration{}));
    }
    fit_bands(out, cases, band_target_share);
    return out;
}

}  // namespace ftb
