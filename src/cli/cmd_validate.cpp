// `ftbound validate CASES.csv [--json|--csv] [--by-source] [--pins PINS.csv]`: predicted vs measured per case, MAPE and
// worst case per quantity (overall and per source), and the check of the pinned figures (exit 3 when one is above
// its pin).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"
#include "validate/calibrate.hpp"
#include "validate/pins.hpp"
#include "validate/validation.hpp"

namespace ftb::cli {
namespace {

namespace fs = std::filesystem;

// Exit status when a figure is above its pin: distinct from bad input (2) and internal faults (1).
constexpr int kPinExceededExit = 3;

std::string fmt_value(double v) { return fmt::format("{:.4g}", v); }

nlohmann::ordered_json summary_json(const std::vector<QuantitySummary>& summary) {
    auto sums = nlohmann::ordered_json::array();
    for (const auto& s : summary)
        sums.push_back({{"source", s.source}, {"quantity", s.quantity}, {"qualities", s.qualities}, {"cases", s.cases},
                        {"mape_percent", 100 * s.mape}, {"worst_id", s.worst_id},
                        {"worst_error_percent", 100 * s.worst_error}, {"beyond_30_percent", s.beyond_30}});
    return sums;
}

nlohmann::ordered_json cases_json(const std::vector<CaseResult>& results) {
    auto rows = nlohmann::ordered_json::array();
    for (const auto& r : results) {
        nlohmann::ordered_json row = {{"id", r.c.id}, {"source", case_source(r.c.id)}, {"quantity", r.c.quantity},
                                      {"quality", r.c.quality}, {"unit", r.c.unit}, {"measured", r.c.measured}};
        if (r.predicted) {
            row["predicted"] = *r.predicted;
            row["error_percent"] = 100 * r.error_fraction;
        } else {
            row["predicted"] = nullptr;
            row["skipped"] = r.skipped;
        }
        rows.push_back(row);
    }
    return rows;
}

// One CSV row per case (docs/output.md): the same fields as cases[] of --json.
std::string cases_csv(const std::vector<CaseResult>& results) {
    CsvTable t({"id", "source", "quantity", "quality", "unit", "measured", "predicted", "error_percent", "skipped"});
    for (const auto& r : results)
        t.add({r.c.id, case_source(r.c.id), r.c.quantity, r.c.quality, r.c.unit, csv_value(r.c.measured),
               r.predicted ? csv_value(*r.predicted) : "", r.predicted ? csv_value(100 * r.error_fraction) : "",
               r.predicted ? "" : r.skipped});
    return t.str();
}

std::string cases_text(const std::vector<CaseResult>& results) {
    TextTable t({"case", "quantity", "quality", "measured", "predicted", "error"}, {false, false, false, true, true, true});
    int skipped = 0;
    for (const auto& r : results) {
        if (!r.predicted) {
            ++skipped;
            continue;
        }
        t.add({r.c.id, r.c.quantity, r.c.quality, fmt_value(r.c.measured) + " " + r.c.unit, fmt_value(*r.predicted),
               fmt::format("{:+.1f}%", 100 * r.error_fraction)});
    }
    std::string out = t.str();
    if (skipped) {
        out += fmt::format("\n{} case(s) not predicted:\n", skipped);
        for (const auto& r : results)
            if (!r.predicted) out += "  " + r.c.id + ": " + r.skipped + "\n";
    }
    return out;
}

std::string summary_text(const std::vector<QuantitySummary>& summary, bool with_source) {
    std::vector<std::string> head = {"quantity", "qualities", "cases", "MAPE", "worst case", "worst error", ">30%"};
    std::vector<bool> right = {false, false, true, true, false, true, true};
    if (with_source) head.insert(head.begin(), "source"), right.insert(right.begin(), false);
    TextTable s(head, right);
    for (const auto& q : summary) {
        std::vector<std::string> row = {q.quantity, q.qualities, std::to_string(q.cases), fmt::format("{:.1f}%", 100 * q.mape),
                                        q.worst_id, fmt::format("{:+.1f}%", 100 * q.worst_error), std::to_string(q.beyond_30)};
        if (with_source) row.insert(row.begin(), q.source);
        s.add(row);
    }
    return s.str();
}

std::string pins_text(const std::vector<PinCheck>& checks) {
    std::string out;
    for (const auto& c : checks)
        out += c.ok ? fmt::format("  ok     {} {} ({}): MAPE {:.1f}% <= pin {:.1f}%\n", c.pin.source, c.pin.quantity,
                                  c.pin.qualities, 100 * c.got.mape, c.pin.max_mape_percent)
                    : "  ABOVE  " + c.message + "\n";
    return out;
}

// The cases file as the pins file names it: relative to the pins file's folder.
std::string relative_to_pins(const std::string& cases, const std::string& pins) {
    const fs::path dir = fs::weakly_canonical(fs::absolute(pins)).parent_path();
    return fs::weakly_canonical(fs::absolute(cases)).lexically_relative(dir).generic_string();
}

struct Options {
    std::string csv, only, pins, reason;
    bool json = false, csv_out = false, by_source = false, update_pins = false, fit_factor = false;
};

// The matmul time factor fitted on every source, and per source the MAPE in-sample, uncalibrated and left out.
int fit_factor(const std::vector<ValidationCase>& cases, const std::string& dir) {
    FactorFit in_sample;
    const auto rows = leave_one_source_out(cases, dir, in_sample);
    std::string out = "matmul_time_factor fitted on every source (data/frameworks/*.yaml, time: matmul_time_factor):\n";
    for (const auto& [arch, f] : in_sample.factor)
        out += fmt::format("  {}: {:.2f} ({} cases)\n", arch, f, in_sample.cases.at(arch));
    TextTable t({"source", "quantity", "cases", "in-sample", "uncalibrated", "left out", "factors fitted without it"},
                {false, false, true, true, true, true, false});
    for (const auto& r : rows) {
        std::string factors;
        for (const auto& [arch, f] : r.fit_left_out.factor) factors += fmt::format("{}{} {:.2f}", factors.empty() ? "" : ", ", arch, f);
        t.add({r.source, r.quantity, std::to_string(r.cases), fmt::format("{:.1f}%", 100 * r.mape_in_sample),
               fmt::format("{:.1f}%", 100 * r.mape_uncalibrated), fmt::format("{:.1f}%", 100 * r.mape_left_out),
               factors.empty() ? "none" : factors});
    }
    out += "\nMAPE of the time cases whose framework opts in (quality high and medium):\n" + t.str();
    std::cout << out;
    return 0;
}

// Rewrites this cases file's pins with the current figures; a pin may rise only with a stated reason.
int update_pins(const Options& o, const std::vector<Pin>& pins, const std::vector<QuantitySummary>& all) {
    std::vector<std::string> rising;
    const auto updated = updated_pins(pins, relative_to_pins(o.csv, o.pins), all, o.reason, rising);
    if (!rising.empty() && o.reason.empty()) {
        for (const auto& r : rising) std::cerr << "error: " << o.pins << ": " << r << ": a pin that rises needs --reason\n";
        return 2;
    }
    write_pins(o.pins, updated);
    for (const auto& r : rising) std::cout << "pin raised: " << r << " (" << o.reason << ")\n";
    std::cout << "pins of " << relative_to_pins(o.csv, o.pins) << " written to " << o.pins << "\n";
    return 0;
}

int run(const Options& o) {
    const auto cases = read_cases(o.csv);
    if (o.update_pins && o.pins.empty()) throw InputError("", "--update-pins", "needs --pins FILE");
    if (o.update_pins && !o.only.empty()) throw InputError("", "--update-pins", "pins cover every quantity: drop --quantity");
    const bool pins_exist = !o.pins.empty() && (!o.update_pins || fs::exists(o.pins));
    const std::vector<Pin> pins = pins_exist ? read_pins(o.pins) : std::vector<Pin>{};
    const fs::path csv_path(o.csv);
    const std::string dir = csv_path.has_parent_path() ? csv_path.parent_path().string() : std::string(".");
    if (o.fit_factor) return fit_factor(cases, dir);
    std::vector<CaseResult> results;
    for (const auto& c : cases)
        if (o.only.empty() || c.quantity == o.only) results.push_back(run_case(c, dir));
    const auto summary = summarise(results);
    const auto by_source = (o.by_source || !o.pins.empty()) ? summarise_by_source(results) : std::vector<QuantitySummary>{};
    std::vector<QuantitySummary> all = summary;
    all.insert(all.end(), by_source.begin(), by_source.end());
    if (o.update_pins) return update_pins(o, pins, all);
    std::vector<PinCheck> checks;
    if (!pins.empty()) {
        checks = check_pins(pins, relative_to_pins(o.csv, o.pins), all);
        if (checks.empty()) throw InputError(o.pins, "cases", "no pin names " + relative_to_pins(o.csv, o.pins));
    }
    bool all_ok = true;
    for (const auto& c : checks) all_ok = all_ok && c.ok;
    if (o.csv_out) {
        std::cout << cases_csv(results);
    } else if (o.json) {
        nlohmann::ordered_json j;
        j["cases"] = cases_json(results);
        j["summary"] = summary_json(summary);
        if (o.by_source) j["by_source"] = summary_json(by_source);
        if (!pins.empty()) {
            auto p = nlohmann::ordered_json::array();
            for (const auto& c : checks)
                p.push_back({{"source", c.pin.source}, {"quantity", c.pin.quantity}, {"qualities", c.pin.qualities},
                             {"max_mape_percent", c.pin.max_mape_percent},
                             {"mape_percent", c.found ? nlohmann::ordered_json(100 * c.got.mape) : nlohmann::ordered_json()},
                             {"ok", c.ok}, {"message", c.message}});
            j["pins"] = p;
        }
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::string out = cases_text(results);
        out += "\nsummary (mean absolute percentage error)\n" + summary_text(summary, false);
        if (o.by_source) out += "\nby source (case-id prefix)\n" + summary_text(by_source, true);
        if (!pins.empty()) out += "\npins (" + o.pins + ")\n" + pins_text(checks);
        std::cout << out;
    }
    if (!all_ok) {
        for (const auto& c : checks)
            if (!c.ok) std::cerr << "pin: " << c.message << "\n";
        return kPinExceededExit;
    }
    return 0;
}

const Register reg{Command{
    "validate", "run every validation case and print predicted vs measured with the error per quantity",
    [](CLI::App& sub) -> std::function<int()> {
        auto o = std::make_shared<Options>();
        sub.add_option("cases", o->csv, "cases.csv (columns id,job,quantity,measured,unit,source,note[,quality])")->required();
        auto* json = sub.add_flag("--json", o->json, "print one JSON document");
        sub.add_flag("--csv", o->csv_out, "print one CSV row per case (docs/output.md)")->excludes(json);
        sub.add_option("--quantity", o->only, "only cases of this quantity");
        sub.add_flag("--by-source", o->by_source, "also summarise per source (case-id prefix: lf, lg, tune, ...)");
        sub.add_option("--pins", o->pins, "pinned figures (validation/pins.csv): exit 3 when a MAPE is above its pin");
        sub.add_flag("--update-pins", o->update_pins, "write this cases file's current figures into --pins");
        sub.add_option("--reason", o->reason, "why a pin rises (required when --update-pins raises one)");
        sub.add_flag("--fit-matmul-factor", o->fit_factor,
                     "fit the matmul time factor per GPU architecture; print in-sample, uncalibrated and "
                     "leave-one-source-out MAPE per source (docs/validation.md)");
        return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace ftb::cli
