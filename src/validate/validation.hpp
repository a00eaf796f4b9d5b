// `ftbound validate`: run every published case, compare predicted with measured, summarise the error
// (mean absolute percentage error per quantity, and the worst case).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ftb {

struct ValidationCase {
    std::string id, job, quantity, unit, source, note, quality;
    double measured = 0;
    int line = 0;
};

struct CaseResult {
    ValidationCase c;
    std::optional<double> predicted;   // in the case's unit
    double error_fraction = 0;         // (predicted - measured) / measured
    std::string skipped;               // why no prediction (empty when predicted)
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
};

// Reads cases.csv (columns id,job,quantity,measured,unit,source,note[,quality]); errors name file and line.
std::vector<ValidationCase> read_cases(const std::string& csv_path);
// Runs one case; job paths are relative to the CSV's folder.
CaseResult run_case(const ValidationCase& c, const std::string& csv_dir);
std::vector<QuantitySummary> summarise(const std::vector<CaseResult>& results);
// The source of a case: its id up to the first '-' (lf, lg, tune, llama3, qwen1, ...).
std::string case_source(const std::string& id);
// summarise() over each source's cases, sources in order of first appearance.
std::vector<QuantitySummary> summarise_by_source(const std::vector<CaseResult>& results);
// RFC 4180 rows (quoted fields with commas, doubled quotes, newlines); errors name the file and line.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& file);

}  // namespace ftb
