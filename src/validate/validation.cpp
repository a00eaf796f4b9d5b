#include "validate/validation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "spec/document.hpp"
#include "spec/job_file.hpp"
#include "validate/predict.hpp"

namespace fs = std::filesystem;

namespace ftb {

std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& file) {
    if (text.find('\0') != std::string::npos) throw InputError(file, "", "not a text file (contains NUL bytes)");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, field_started = false;
    int line = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quoted) {
            if (ch == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
                else quoted = false;
            } else {
                if (ch == '\n') ++line;
                field += ch;
            }
            continue;
        }
        if (ch == '"' && !field_started) {
            quoted = field_started = true;
        } else if (ch == ',') {
            row.push_back(field), field.clear(), field_started = false;
        } else if (ch == '\n' || ch == '\r') {
            if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            row.push_back(field), field.clear(), field_started = false;
            rows.push_back(row), row.clear();
            ++line;
        } else {
            field += ch;
            field_started = true;
        }
    }
    if (quoted) throw InputError(file, "line " + std::to_string(line), "unterminated quoted field");
    if (field_started || !row.empty()) row.push_back(field), rows.push_back(row);
    return rows;
}

namespace {

std::vector<std::string> split_settings(const std::string& text, const std::string& path, const std::string& where) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        const size_t end = std::min(text.find(';', start), text.size());
        const std::string item = text.substr(start, end - start);
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw InputError(path, where, "'" + item + "' is not KEY=VALUE (settings are KEY=VALUE;KEY=VALUE)");
        out.push_back(item);
        start = end + 1;
    }
    return out;
}

}  // namespace

std::vector<ValidationCase> read_cases(const std::string& path) {
    const std::string text = read_text_file(path, "cases file");
    auto rows = parse_csv(text, path);
    if (rows.empty()) throw InputError(path, "", "empty cases file");
    const auto& header = rows[0];
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* need : {"id", "job", "quantity", "measured", "unit"})
        if (!col.count(need)) throw InputError(path, "header", std::string("missing column '") + need + "'");
    static const std::vector<std::string> quantities = {"allocated_peak", "typical_step_allocated_peak",
                                                        "reserved_peak", "device_used",
                                                        "tokens_per_second_per_gpu", "tokens_per_second", "mfu",
                                                        "step_seconds", "iteration_seconds", "max_seq_len"};
    std::vector<ValidationCase> out;
    for (size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (row.size() == 1 && row[0].empty()) continue;
        auto get = [&](const char* name) { return col.count(name) && col[name] < row.size() ? row[col[name]] : std::string(); };
        ValidationCase c;
        c.line = int(r + 1);
        c.id = get("id");
        c.job = get("job");
        c.quantity = get("quantity");
        c.unit = get("unit");
        c.source = get("source");
        c.note = get("note");
        c.quality = get("quality");
        const std::string where = "row " + std::to_string(r + 1);
        c.set = split_settings(get("set"), path, where + " set");
        if (std::find(quantities.begin(), quantities.end(), c.quantity) == quantities.end())
            throw InputError(path, where + " quantity", "unknown quantity '" + c.quantity + "'");
        try {
            size_t used = 0;
            c.measured = std::stod(get("measured"), &used);
            if (!std::isfinite(c.measured) || c.measured <= 0) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw InputError(path, where + " measured", "not a positive number: '" + get("measured") + "'");
        }
        out.push_back(c);
    }
    return out;
}

CaseResult run_case_on(const ValidationCase& c, const Job& job) {
    CaseResult r;
    r.c = c;
    try {
        std::optional<PredictedBand> band;
        r.predicted = predict_quantity(job, c.quantity, c.unit, r.skipped, &band);
        if (band) r.band_low = band->low, r.band_high = band->high, r.band_parts = band->parts;
    } catch (const InputError& e) {
        r.predicted.reset();
        r.band_low.reset(), r.band_high.reset(), r.band_parts.reset();
        r.skipped = std::string("error: ") + e.what();
    }
    if (r.predicted) r.error_fraction = (*r.predicted - c.measured) / c.measured;
    return r;
}

CaseResult run_case(const ValidationCase& c, const std::string& csv_dir) {
    const std::string job_path = (fs::path(csv_dir) / c.job).string();
    // One bad job does not stop the run: the case is reported as not predicted, with the reason.
    try {
        CaseResult r = run_case_on(c, load_job(job_path, c.set));
        if (!c.set.empty()) {
            std::string why;
            r.predicted_as_transcribed = predict_quantity(load_job(job_path), c.quantity, c.unit, why);
        }
        return r;
    } catch (const InputError& e) {
        CaseResult r;
        r.c = c;
        r.skipped = std::string("error: ") + e.what();
        return r;
    }
}

double CaseResult::band_half_width_fraction() const {
    if (!predicted || !band_low || !band_high || *predicted <= 0) return 0;
    return (*band_high - *band_low) / 2 / *predicted;
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

// Band honesty of the counted cases that carry a band.
void add_band_counts(QuantitySummary& s, const std::vector<const CaseResult*>& counted) {
    std::vector<double> half_widths;
    for (const CaseResult* r : counted) {
        if (!r->band_low || !r->band_high) continue;
        ++s.banded;
        if (r->in_band()) ++s.in_band;
        half_widths.push_back(r->band_half_width_fraction());
    }
    s.band_median_half_width = median(half_widths);
}

}  // namespace

std::vector<QuantitySummary> summarise(const std::vector<CaseResult>& results) {
    std::vector<QuantitySummary> out;
    std::vector<std::string> order;
    for (const auto& r : results)
        if (std::find(order.begin(), order.end(), r.c.quantity) == order.end()) order.push_back(r.c.quantity);
    for (const auto& q : order) {
        for (int pass = 0; pass < 2; ++pass) {
            QuantitySummary s;
            s.quantity = q;
            s.qualities = pass == 0 ? "high+medium" : "all";
            double sum = 0;
            std::vector<const CaseResult*> counted;
            for (const auto& r : results) {
                if (r.c.quantity != q || !r.predicted) continue;
                if (pass == 0 && r.c.quality == "low") continue;
                counted.push_back(&r);
                const double e = std::fabs(r.error_fraction);
                sum += e;
                ++s.cases;
                if (e > 0.30) ++s.beyond_30;
                if (e >= std::fabs(s.worst_error)) s.worst_error = r.error_fraction, s.worst_id = r.c.id;
            }
            if (s.cases == 0) continue;
            s.mape = sum / s.cases;
            add_band_counts(s, counted);
            out.push_back(s);
        }
    }
    return out;
}

std::string case_source(const std::string& id) { return id.substr(0, id.find('-')); }

std::vector<QuantitySummary> summarise_by_source(const std::vector<CaseResult>& results) {
    std::vector<std::string> sources;
    for (const auto& r : results)
        if (std::find(sources.begin(), sources.end(), case_source(r.c.id)) == sources.end())
            sources.push_back(case_source(r.c.id));
    std::vector<QuantitySummary> out;
    for (const auto& source : sources) {
        std::vector<CaseResult> mine;
        for (const auto& r : results)
            if (case_source(r.c.id) == source) mine.push_back(r);
        for (QuantitySummary s : summarise(mine)) {
            s.source = source;
            out.push_back(std::move(s));
        }
    }
    return out;
}

}  // namespace ftb
