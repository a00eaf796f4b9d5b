#include "validate/pins.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>

#include "ftbound/error.hpp"
#include "spec/document.hpp"

namespace ftb {
namespace {

double parse_number(const std::string& text, const std::string& file, const std::string& where) {
    try {
        size_t used = 0;
        const double v = std::stod(text, &used);
        if (used != text.size() || !std::isfinite(v) || v < 0) throw std::invalid_argument("");
        return v;
    } catch (const std::exception&) {
        throw InputError(file, where, "not a number >= 0: '" + text + "'");
    }
}

int parse_count(const std::string& text, const std::string& file, const std::string& where) {
    const double v = parse_number(text, file, where);
    if (v != std::floor(v) || v > 1e9) throw InputError(file, where, "not a whole number: '" + text + "'");
    return int(v);
}

double tenths(double percent) { return std::round(percent * 10) / 10; }

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
}

const Pin* find_pin(const std::vector<Pin>& pins, const std::string& cases, const QuantitySummary& s) {
    for (const auto& p : pins)
        if (p.cases == cases && p.source == s.source && p.quantity == s.quantity && p.qualities == s.qualities) return &p;
    return nullptr;
}

}  // namespace

std::vector<Pin> read_pins(const std::string& path) {
    const auto rows = parse_csv(read_text_file(path, "pins file"), path);
    if (rows.empty()) throw InputError(path, "", "empty pins file");
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    for (const char* need : {"cases", "source", "quantity", "qualities", "cases_predicted", "max_mape_percent", "max_beyond_30"})
        if (!col.count(need)) throw InputError(path, "header", std::string("missing column '") + need + "'");
    std::vector<Pin> out;
    for (size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        if (row.size() == 1 && row[0].empty()) continue;
        auto get = [&](const char* name) { return col.count(name) && col[name] < row.size() ? row[col[name]] : std::string(); };
        const std::string where = "row " + std::to_string(r + 1);
        Pin p;
        p.line = int(r + 1);
        p.cases = get("cases"), p.source = get("source"), p.quantity = get("quantity"), p.qualities = get("qualities");
        p.reason = get("reason");
        if (p.cases.empty()) throw InputError(path, where + " cases", "empty");
        if (p.source.empty()) throw InputError(path, where + " source", "empty (use 'all' for every case)");
        if (p.qualities != "all" && p.qualities != "high+medium")
            throw InputError(path, where + " qualities", "'all' or 'high+medium', not '" + p.qualities + "'");
        p.count = parse_count(get("cases_predicted"), path, where + " cases_predicted");
        p.max_mape_percent = parse_number(get("max_mape_percent"), path, where + " max_mape_percent");
        p.max_beyond_30 = parse_count(get("max_beyond_30"), path, where + " max_beyond_30");
        const std::string in_band = get("min_in_band");
        if (!in_band.empty()) p.min_in_band = parse_count(in_band, path, where + " min_in_band");
        out.push_back(p);
    }
    return out;
}

std::vector<PinCheck> check_pins(const std::vector<Pin>& pins, const std::string& cases_relative,
                                 const std::vector<QuantitySummary>& summaries) {
    std::vector<PinCheck> out;
    for (const Pin& p : pins) {
        if (p.cases != cases_relative) continue;
        PinCheck c;
        c.pin = p;
        for (const auto& s : summaries)
            if (s.source == p.source && s.quantity == p.quantity && s.qualities == p.qualities) c.found = true, c.got = s;
        const std::string what = fmt::format("{} {} {} ({})", p.cases, p.source, p.quantity, p.qualities);
        if (!c.found) {
            c.message = what + ": no case predicted (pinned " + std::to_string(p.count) + ")";
        } else if (c.got.cases != p.count) {
            c.message = fmt::format("{}: {} cases predicted, pinned {}", what, c.got.cases, p.count);
        } else if (tenths(100 * c.got.mape) > p.max_mape_percent + 1e-9) {
            c.message = fmt::format("{}: MAPE {:.1f}% above its pin {:.1f}%", what, 100 * c.got.mape, p.max_mape_percent);
        } else if (c.got.beyond_30 > p.max_beyond_30) {
            c.message = fmt::format("{}: {} cases beyond 30%, pinned {}", what, c.got.beyond_30, p.max_beyond_30);
        } else if (p.min_in_band >= 0 && c.got.in_band < p.min_in_band) {
            c.message = fmt::format("{}: {} of {} measured inside the plan's band, pinned at least {}", what,
                                    c.got.in_band, c.got.banded, p.min_in_band);
        } else {
            c.ok = true;
        }
        out.push_back(c);
    }
    return out;
}

std::vector<Pin> updated_pins(const std::vector<Pin>& pins, const std::string& cases_relative,
                              const std::vector<QuantitySummary>& summaries, const std::string& reason,
                              std::vector<std::string>& rising) {
    std::vector<Pin> out;
    for (const auto& p : pins)
        if (p.cases != cases_relative) out.push_back(p);
    for (const auto& s : summaries) {
        Pin p;
        p.cases = cases_relative, p.source = s.source, p.quantity = s.quantity, p.qualities = s.qualities;
        p.count = s.cases;
        p.max_mape_percent = tenths(100 * s.mape);
        p.max_beyond_30 = s.beyond_30;
        p.min_in_band = s.banded > 0 ? s.in_band : -1;
        const Pin* old = find_pin(pins, cases_relative, s);
        const bool rises = old && (p.max_mape_percent > old->max_mape_percent + 1e-9 || p.max_beyond_30 > old->max_beyond_30 ||
                                   p.min_in_band < old->min_in_band);
        if (rises) {
            rising.push_back(fmt::format("{} {} {} ({}): MAPE {:.1f}% -> {:.1f}%, beyond 30% {} -> {}, in band {} -> {}",
                                         p.cases, p.source, p.quantity, p.qualities, old->max_mape_percent,
                                         p.max_mape_percent, old->max_beyond_30, p.max_beyond_30, old->min_in_band,
                                         p.min_in_band));
            p.reason = reason;
        } else {
            p.reason = old ? old->reason : std::string("first pin");
        }
        out.push_back(p);
    }
    return out;
}

void write_pins(const std::string& path, const std::vector<Pin>& pins) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError(path, "", "cannot write the pins file");
    f << "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,min_in_band,reason\n";
    for (const auto& p : pins)
        f << csv_field(p.cases) << ',' << csv_field(p.source) << ',' << p.quantity << ',' << p.qualities << ','
          << p.count << ',' << fmt::format("{:.1f}", p.max_mape_percent) << ',' << p.max_beyond_30 << ','
          << (p.min_in_band >= 0 ? std::to_string(p.min_in_band) : std::string()) << ',' << csv_field(p.reason) << '\n';
    if (!f) throw InputError(path, "", "write failed");
}

std::string cases_relative_to_pins(const std::string& cases, const std::string& pins) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::weakly_canonical(fs::absolute(pins)).parent_path();
    return fs::weakly_canonical(fs::absolute(cases)).lexically_relative(dir).generic_string();
}

}  // namespace ftb
