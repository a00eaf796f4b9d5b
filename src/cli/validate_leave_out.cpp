// `ftbound validate --leave-out` (validate_leave_out.hpp).
#include "cli/validate_leave_out.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ftbound/error.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"
#include "validate/calibrated_settings.hpp"
#include "validate/pins.hpp"

namespace ftb::cli {
namespace {

using json = nlohmann::ordered_json;

// Exit status when a figure is above its pin (as validate --pins).
constexpr int kPinExceededExit = 3;
// The band's fit holds this share of the memory cases (validate --fit-band, issue 9).
constexpr double kBandTargetShare = 0.90;

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string values_text(const FitValues& values) {
    std::string out;
    for (const auto& [key, v] : values) out += fmt::format("{}{}{:.4g}", out.empty() ? "" : ", ", key.empty() ? "" : key + " ", v);
    return out.empty() ? "neutral" : out;
}

std::string settings_text(const std::vector<CalibratedSetting>& settings, const LeaveOutResult& r) {
    std::string out = fmt::format("calibrated settings fitted on every source ({} passes):\n", r.in_sample.passes);
    for (const auto& s : settings) {
        const auto it = r.in_sample.values.find(s.name);
        out += fmt::format("  {} ({}; neutral {:g}):", s.name, s.lives_in, s.neutral);
        if (it == r.in_sample.values.end() || it->second.empty()) out += " no case fits it\n";
        for (const auto& [key, v] : it == r.in_sample.values.end() ? FitValues{} : it->second)
            out += fmt::format(" {}{:.4g} ({} cases)", key.empty() ? "" : key + " ", v, r.in_sample.cases.at(s.name).at(key));
        out += "\n";
    }
    const BandFractions& b = r.band_in_sample;
    out += fmt::format("  memory band fractions (src/memory/device_memory.hpp kBandFractions, in use {:.1f}% / {:.0f}% / {:.0f}%): "
                       "state {:.1f}% / saved {:.0f}% / overhead {:.0f}%\n",
                       100 * kBandFractions.state, 100 * kBandFractions.saved, 100 * kBandFractions.overhead,
                       100 * b.state, 100 * b.saved, 100 * b.overhead);
    return out;
}

std::string refits_text(const std::vector<CalibratedSetting>& settings, const LeaveOutResult& r) {
    TextTable t({"left out", "refitted without it", "fell back to neutral"}, {false, false, false});
    for (const auto& refit : r.refits) {
        std::string values;
        for (const auto& s : settings) {
            const auto it = refit.fit.values.find(s.name);
            values += fmt::format("{}{} {}", values.empty() ? "" : "; ", s.name,
                                  values_text(it == refit.fit.values.end() ? FitValues{} : it->second));
        }
        std::string fell;
        for (const auto& f : refit.fell_back) fell += (fell.empty() ? "" : ", ") + f;
        t.add({refit.source, values, fell.empty() ? "-" : fell});
    }
    return t.str();
}

std::string rows_text(const std::vector<LeaveOutSummary>& rows) {
    TextTable t({"source", "quantity", "qualities", "cases", "left out", "in-sample", "uncalibrated", "worst case (left out)",
                 "worst", ">30%", "in band"},
                {false, false, false, true, true, true, true, false, true, true, true});
    for (const auto& r : rows) {
        const QuantitySummary& l = r.left_out;
        t.add({l.source, l.quantity, l.qualities, std::to_string(l.cases), percent(l.mape), percent(r.in_sample.mape),
               percent(r.uncalibrated.mape), l.worst_id, fmt::format("{:+.1f}%", 100 * l.worst_error),
               std::to_string(l.beyond_30), l.banded > 0 ? fmt::format("{}/{}", l.in_band, l.banded) : ""});
    }
    return t.str();
}

std::string rows_csv(const std::vector<LeaveOutSummary>& rows) {
    CsvTable t({"cases_file", "source", "quantity", "qualities", "cases", "left_out_mape_percent", "in_sample_mape_percent",
                "uncalibrated_mape_percent", "worst_id", "worst_error_percent", "beyond_30", "in_band", "band_cases"});
    for (const auto& r : rows) {
        const QuantitySummary& l = r.left_out;
        t.add({r.cases_file, l.source, l.quantity, l.qualities, std::to_string(l.cases), csv_value(100 * l.mape),
               csv_value(100 * r.in_sample.mape), csv_value(100 * r.uncalibrated.mape), l.worst_id,
               csv_value(100 * l.worst_error), std::to_string(l.beyond_30), l.banded > 0 ? std::to_string(l.in_band) : "",
               l.banded > 0 ? std::to_string(l.banded) : ""});
    }
    return t.str();
}

json values_json(const Calibration& cal) {
    json j = json::object();
    for (const auto& [name, values] : cal) {
        json v = json::object();
        for (const auto& [key, x] : values) v[key.empty() ? "value" : key] = x;
        j[name] = v;
    }
    return j;
}

json result_json(const LeaveOutResult& r, const std::vector<LeaveOutSummary>& rows, double wall_seconds) {
    json j;
    j["in_sample"] = {{"settings", values_json(r.in_sample.values)}, {"passes", r.in_sample.passes}};
    json refits = json::array();
    for (const auto& refit : r.refits)
        refits.push_back({{"left_out", refit.source}, {"settings", values_json(refit.fit.values)},
                          {"passes", refit.fit.passes}, {"fell_back_to_neutral", refit.fell_back}});
    j["refits"] = refits;
    json out = json::array();
    for (const auto& row : rows) {
        const QuantitySummary& l = row.left_out;
        out.push_back({{"cases_file", row.cases_file}, {"source", l.source}, {"quantity", l.quantity},
                       {"qualities", l.qualities}, {"cases", l.cases}, {"left_out_mape_percent", 100 * l.mape},
                       {"in_sample_mape_percent", 100 * row.in_sample.mape},
                       {"uncalibrated_mape_percent", 100 * row.uncalibrated.mape}, {"worst_id", l.worst_id},
                       {"worst_error_percent", 100 * l.worst_error}, {"beyond_30", l.beyond_30},
                       {"in_band", l.banded > 0 ? json(l.in_band) : json()},
                       {"band_cases", l.banded > 0 ? json(l.banded) : json()}});
    }
    j["rows"] = out;
    j["wall_seconds"] = wall_seconds;
    return j;
}

// The left-out figures of one cases file as validate's summaries (what its pins check).
std::vector<QuantitySummary> left_out_summaries(const std::vector<LeaveOutSummary>& rows, const std::string& file) {
    std::vector<QuantitySummary> out;
    for (const auto& r : rows)
        if (r.cases_file == file) out.push_back(r.left_out);
    return out;
}

// The left-out figures depend on the whole pool: the pins file must name exactly the cases files given.
void check_pool(const LeaveOutOptions& o, const std::vector<Pin>& pins) {
    std::vector<std::string> given;
    for (const auto& f : o.cases_files) given.push_back(cases_relative_to_pins(f, o.pins));
    for (const auto& p : pins)
        if (std::find(given.begin(), given.end(), p.cases) == given.end())
            throw InputError(o.pins, "row " + std::to_string(p.line) + " cases",
                             "'" + p.cases + "' is pinned but not given: left-out figures are pinned for the whole pool");
    for (const auto& g : given)
        if (std::none_of(pins.begin(), pins.end(), [&](const Pin& p) { return p.cases == g; }))
            throw InputError(o.pins, "cases", "no pin names " + g + " (pin the pool with --update-pins)");
}

int update_left_out_pins(const LeaveOutOptions& o, const std::vector<LeaveOutSummary>& rows, std::vector<Pin> pins) {
    std::vector<std::string> rising;
    for (const auto& f : o.cases_files)
        pins = updated_pins(pins, cases_relative_to_pins(f, o.pins), left_out_summaries(rows, f), o.reason, rising);
    if (!rising.empty() && o.reason.empty()) {
        for (const auto& r : rising) std::cerr << "error: " << o.pins << ": " << r << ": a pin that rises needs --reason\n";
        return 2;
    }
    write_pins(o.pins, pins);
    for (const auto& r : rising) std::cout << "pin raised: " << r << " (" << o.reason << ")\n";
    std::cout << "left-out pins written to " << o.pins << "\n";
    return 0;
}

int check_left_out_pins(const LeaveOutOptions& o, const std::vector<LeaveOutSummary>& rows, const std::vector<Pin>& pins) {
    check_pool(o, pins);
    bool ok = true;
    for (const auto& f : o.cases_files)
        for (const auto& c : check_pins(pins, cases_relative_to_pins(f, o.pins), left_out_summaries(rows, f))) {
            if (c.ok) continue;
            std::cerr << "pin (left out): " << c.message << "\n";
            ok = false;
        }
    if (ok) std::cerr << "left-out pins (" << o.pins << "): all held\n";
    return ok ? 0 : kPinExceededExit;
}

}  // namespace

int run_leave_out(const LeaveOutOptions& o) {
    if (o.update_pins && o.pins.empty()) throw InputError("", "--update-pins", "needs --pins FILE");
    const bool read_existing = !o.pins.empty() && (!o.update_pins || std::filesystem::exists(o.pins));
    const std::vector<Pin> pins = read_existing ? read_pins(o.pins) : std::vector<Pin>{};
    const auto start = std::chrono::steady_clock::now();
    const std::vector<CalibratedSetting> settings = calibrated_settings();
    const std::vector<LoadedCase> cases = load_cases(o.cases_files);
    const LeaveOutResult result = leave_one_source_out(cases, settings, case_predictor(settings), kBandTargetShare);
    const std::vector<LeaveOutSummary> rows = summarise_leave_out(result, cases);
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.update_pins) return update_left_out_pins(o, rows, pins);
    if (o.csv) {
        std::cout << rows_csv(rows);
    } else if (o.json) {
        std::cout << result_json(result, rows, wall_s).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
        std::cout << settings_text(settings, result) << "\nrefitted without each source:\n" << refits_text(settings, result)
                  << "\nMAPE per source: each source predicted with the settings fitted without it (left out), with "
                     "them fitted on every source (in-sample), with every setting neutral (uncalibrated); worst case, "
                     ">30% and in band (memory band refitted without the source) are the left-out figures:\n"
                  << rows_text(rows) << fmt::format("\n{} cases, {} sources, {:.1f} s\n", cases.size(),
                                                    result.refits.size(), wall_s);
    }
    return pins.empty() ? 0 : check_left_out_pins(o, rows, pins);
}

}  // namespace ftb::cli
