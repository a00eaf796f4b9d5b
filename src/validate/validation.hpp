// `ftbound validate`: run every published case, compare predicted with measured, summarise the error
// (mean absolute percentage error per quantity, and the worst case).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "memory/device_memory.hpp"

namespace ftb {

struct ValidationCase {
    std::string id, job, quantity, unit, source, note, quality;
    // Optional `set` column (KEY=VALUE;KEY=VALUE): job-file overrides for a real setting the case's source
    // states but its job file does not carry (e.g. a job shared with time cases transcribed per micro-batch).
    std::vector<std::string> set;
    double measured = 0;
    int line = 0;
};

struct CaseResult {
    ValidationCase c;
    std::optional<double> predicted;   // in the case's unit (with the case's `set` applied)
    std::optional<double> predicted_as_transcribed;   // without `set`, when the case has one
    double error_fraction = 0;         // (predicted - measured) / measured
    std::string skipped;               // why no prediction (empty when predicted)
    // Memory figures: the plan's uncertainty band around the prediction, in the case's unit.
    std::optional<double> band_low, band_high;
    std::optional<BandParts> band_parts;   // the figure's bytes by kind, as the band weighs them
    bool in_band() const { return band_low && band_high && c.measured >= *band_low && c.measured <= *band_high; }
    // Half the band's width as a fraction of the prediction (0 without a band).
    double band_half_width_fraction() const;
};

struct QuantitySummary {
    std::string quantity;
    std::string source = "all";        // "all", or the case-id prefix (case_source) of the cases counted
    std::string qualities;             // which qualities are counted ("all", "high+medium")
    int cases = 0;
    double mape = 0;
    std::string worst_id;
    double worst_error = 0;
    int beyond_30 = 0;
    // Band honesty (memory figures): of `banded` cases with a band, `in_band` have the measured value inside it;
    // the median half-width of those bands as a fraction of the prediction.
    int banded = 0;
    int in_band = 0;
    double band_median_half_width = 0;
};

// Reads cases.csv (columns id,job,quantity,measured,unit,source,note[,quality]); errors name file and line.
std::vector<ValidationCase> read_cases(const std::string& csv_path);
// Runs one case; job paths are relative to the CSV's folder.
CaseResult run_case(const ValidationCase& c, const std::string& csv_dir);
// Runs one case on an already loaded job (the case's `set` applied).
CaseResult run_case_on(const ValidationCase& c, const Job& job);
std::vector<QuantitySummary> summarise(const std::vector<CaseResult>& results);
// The source of a case: its id up to the first '-' (lf, lg, tune, llama3, qwen1, ...).
std::string case_source(const std::string& id);
// summarise() over each source's cases, sources in order of first appearance.
std::vector<QuantitySummary> summarise_by_source(const std::vector<CaseResult>& results);
// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);
// RFC 4180 rows (quoted fields with commas, doubled quotes, newlines); errors name the file and line.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& file);

}  // namespace ftb
