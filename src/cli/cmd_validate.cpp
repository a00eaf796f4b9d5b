// `ftbound validate CASES.csv [--json|--csv] [--by-source] [--pins PINS.csv]`: predicted vs measured per case, MAPE and
// worst case per quantity (overall and per source), and the check of the pinned figures (exit 3 when one is above
// its pin). `--leave-out CASES.csv...` (validate_leave_out.hpp) and `--fit-band CASES.csv...` take several files.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/validate_leave_out.hpp"
#include "ftbound/error.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"
#include "validate/band_fit.hpp"
#include "validate/pins.hpp"
#include "validate/validation.hpp"

namespace ftb::cli {
namespace {

namespace fs = std::filesystem;

// Exit status when a figure is above its pin: distinct from bad input (2) and internal faults (1).
constexpr int kPinExceededExit = 3;

std::string fmt_value(double v) { return fmt::format("{:.4g}", v); }

// A count or figure that exists only for the memory figures' bands: null elsewhere.
template <typename T>
nlohmann::ordered_json band_value(const QuantitySummary& s, T v) {
    return s.banded > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

nlohmann::ordered_json summary_json(const std::vector<QuantitySummary>& summary) {
    auto sums = nlohmann::ordered_json::array();
    for (const auto& s : summary)
        sums.push_back({{"source", s.source}, {"quantity", s.quantity}, {"qualities", s.qualities}, {"cases", s.cases},
                        {"mape_percent", 100 * s.mape}, {"worst_id", s.worst_id},
                        {"worst_error_percent", 100 * s.worst_error}, {"beyond_30_percent", s.beyond_30},
                        {"in_band", band_value(s, s.in_band)}, {"band_cases", band_value(s, s.banded)},
                        {"band_median_half_width_percent", band_value(s, 100 * s.band_median_half_width)}});
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
            if (r.band_low && r.band_high) {
                row["band"] = {*r.band_low, *r.band_high};
                row["in_band"] = r.in_band();
            }
            if (r.predicted_as_transcribed) {
                row["set"] = r.c.set;
                row["predicted_as_transcribed"] = *r.predicted_as_transcribed;
            }
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
    CsvTable t({"id", "source", "quantity", "quality", "unit", "measured", "predicted", "error_percent", "band_low",
                "band_high", "in_band", "skipped"});
    for (const auto& r : results) {
        const bool banded = r.predicted && r.band_low && r.band_high;
        t.add({r.c.id, case_source(r.c.id), r.c.quantity, r.c.quality, r.c.unit, csv_value(r.c.measured),
               r.predicted ? csv_value(*r.predicted) : "", r.predicted ? csv_value(100 * r.error_fraction) : "",
               banded ? csv_value(*r.band_low) : "", banded ? csv_value(*r.band_high) : "",
               banded ? (r.in_band() ? "true" : "false") : "", r.predicted ? "" : r.skipped});
    }
    return t.str();
}

std::string cases_text(const std::vector<CaseResult>& results) {
    TextTable t({"case", "quantity", "quality", "measured", "predicted", "error", "band"},
                {false, false, false, true, true, true, false});
    int skipped = 0;
    for (const auto& r : results) {
        if (!r.predicted) {
            ++skipped;
            continue;
        }
        const std::string band = r.band_low && r.band_high ? fmt::format("+/-{:.1f}% {}", 100 * r.band_half_width_fraction(),
                                                                         r.in_band() ? "in" : "out")
                                                           : "";
        t.add({r.c.id, r.c.quantity, r.c.quality, fmt_value(r.c.measured) + " " + r.c.unit, fmt_value(*r.predicted),
               fmt::format("{:+.1f}%", 100 * r.error_fraction), band});
    }
    std::string out = t.str();
    std::string stated;
    for (const auto& r : results)
        if (r.predicted && r.predicted_as_transcribed) {
            std::string sets;
            for (const auto& kv : r.c.set) sets += (sets.empty() ? "" : "; ") + kv;
            stated += fmt::format("  {}: {} -> {} ({:+.1f}%); as transcribed {} ({:+.1f}%)\n", r.c.id, sets,
                                  fmt_value(*r.predicted), 100 * r.error_fraction, fmt_value(*r.predicted_as_transcribed),
                                  100 * (*r.predicted_as_transcribed - r.c.measured) / r.c.measured);
        }
    if (!stated.empty()) out += "\ncases planned with the setting their source states (set column):\n" + stated;
    if (skipped) {
        out += fmt::format("\n{} case(s) not predicted:\n", skipped);
        for (const auto& r : results)
            if (!r.predicted) out += "  " + r.c.id + ": " + r.skipped + "\n";
    }
    return out;
}

std::string summary_text(const std::vector<QuantitySummary>& summary, bool with_source) {
    std::vector<std::string> head = {"quantity", "qualities", "cases", "MAPE", "worst case", "worst error", ">30%",
                                     "in band", "band +/-"};
    std::vector<bool> right = {false, false, true, true, false, true, true, true, true};
    if (with_source) head.insert(head.begin(), "source"), right.insert(right.begin(), false);
    TextTable s(head, right);
    for (const auto& q : summary) {
        const bool banded = q.banded > 0;
        std::vector<std::string> row = {q.quantity, q.qualities, std::to_string(q.cases), fmt::format("{:.1f}%", 100 * q.mape),
                                        q.worst_id, fmt::format("{:+.1f}%", 100 * q.worst_error), std::to_string(q.beyond_30),
                                        banded ? fmt::format("{}/{}", q.in_band, q.banded) : "",
                                        banded ? fmt::format("{:.1f}%", 100 * q.band_median_half_width) : ""};
        if (with_source) row.insert(row.begin(), q.source);
        s.add(row);
    }
    return s.str();
}

std::string pins_text(const std::vector<PinCheck>& checks) {
    std::string out;
    for (const auto& c : checks)
        out += c.ok ? fmt::format("  ok     {} {} ({}): MAPE {:.1f}% <= pin {:.1f}%{}\n", c.pin.source, c.pin.quantity,
                                  c.pin.qualities, 100 * c.got.mape, c.pin.max_mape_percent,
                                  c.pin.min_in_band >= 0 ? fmt::format(", in band {} >= pin {}", c.got.in_band, c.pin.min_in_band) : "")
                    : "  ABOVE  " + c.message + "\n";
    return out;
}

struct Options {
    std::vector<std::string> csvs;   // the cases files: one, or several with --fit-band or --leave-out
    std::string csv, only, pins, reason;
    bool json = false, csv_out = false, by_source = false, update_pins = false, leave_out = false, fit_band = false;
};

std::string band_fit_row(const BandFit& f) {
    return fmt::format("{:.1f}% / {:.0f}% / {:.0f}%", 100 * f.fractions.state, 100 * f.fractions.saved,
                       100 * f.fractions.overhead);
}

std::string held_share(const BandFit& f) {
    return fmt::format("{}/{} ({:.0f}%)", f.held, f.cases, f.cases > 0 ? 100.0 * f.held / f.cases : 0.0);
}

// The memory band's fractions fitted on every cases file given, the band in use beside them, and per source the
// share of its cases held by fractions fitted on the other sources.
int fit_band(const Options& o) {
    std::vector<CaseResult> results;
    for (const auto& csv : o.csvs) {
        const fs::path csv_path(csv);
        const std::string dir = csv_path.has_parent_path() ? csv_path.parent_path().string() : std::string(".");
        for (const auto& c : read_cases(csv)) results.push_back(run_case(c, dir));
    }
    const std::vector<BandCase> cases = band_cases(results);
    if (cases.empty()) throw InputError(o.csvs.front(), "cases", "no memory case of quality high or medium to fit the band on");
    constexpr double kTargetShare = 0.90;   // issue 9: the band holds at least 90% of the public memory cases
    TextTable t({"band", "state / saved / overhead", "cases held", "mean half-width", "median"},
                {false, false, true, true, true});
    auto add = [&](const std::string& name, const BandFit& f) {
        t.add({name, band_fit_row(f), held_share(f), fmt::format("{:.1f}%", 100 * f.mean_half_width),
               fmt::format("{:.1f}%", 100 * f.median_half_width)});
    };
    add("in use (kBandFractions)", evaluate_band(cases, kBandFractions));
    add("fitted on every source", fit_band(cases, kTargetShare));
    TextTable s({"source", "cases", "fitted on the others", "held of the others", "held of this source"},
                {false, true, false, true, true});
    for (const auto& c : band_leave_one_source_out(cases, kTargetShare))
        s.add({c.source, std::to_string(c.held_out.cases), band_fit_row(c.fitted_without), held_share(c.fitted_without),
               held_share(c.held_out)});
    std::cout << fmt::format("memory band over {} cases (memory figures, quality high and medium), target {:.0f}% held, "
                             "no band wider than +/-{:.0f}%:\n",
                             cases.size(), 100 * kTargetShare, 100 * kMaxBandHalfWidth)
              << t.str() << "\nleft out, per source:\n" << s.str();
    return 0;
}

// Rewrites this cases file's pins with the current figures; a pin may rise only with a stated reason.
int update_pins(const Options& o, const std::vector<Pin>& pins, const std::vector<QuantitySummary>& all) {
    std::vector<std::string> rising;
    const auto updated = updated_pins(pins, cases_relative_to_pins(o.csv, o.pins), all, o.reason, rising);
    if (!rising.empty() && o.reason.empty()) {
        for (const auto& r : rising) std::cerr << "error: " << o.pins << ": " << r << ": a pin that rises needs --reason\n";
        return 2;
    }
    write_pins(o.pins, updated);
    for (const auto& r : rising) std::cout << "pin raised: " << r << " (" << o.reason << ")\n";
    std::cout << "pins of " << cases_relative_to_pins(o.csv, o.pins) << " written to " << o.pins << "\n";
    return 0;
}

nlohmann::ordered_json pins_json(const std::vector<PinCheck>& checks) {
    auto p = nlohmann::ordered_json::array();
    for (const auto& c : checks)
        p.push_back({{"source", c.pin.source}, {"quantity", c.pin.quantity}, {"qualities", c.pin.qualities},
                     {"max_mape_percent", c.pin.max_mape_percent},
                     {"mape_percent", c.found ? nlohmann::ordered_json(100 * c.got.mape) : nlohmann::ordered_json()},
                     {"min_in_band", c.pin.min_in_band >= 0 ? nlohmann::ordered_json(c.pin.min_in_band) : nlohmann::ordered_json()},
                     {"in_band", c.found && c.got.banded > 0 ? nlohmann::ordered_json(c.got.in_band) : nlohmann::ordered_json()},
                     {"ok", c.ok}, {"message", c.message}});
    return p;
}

struct ValidationOutput {
    std::vector<CaseResult> results;
    std::vector<QuantitySummary> summary, by_source;
    std::vector<PinCheck> checks;
};

void print_validation(const Options& o, const ValidationOutput& v) {
    if (o.csv_out) {
        std::cout << cases_csv(v.results);
    } else if (o.json) {
        nlohmann::ordered_json j;
        j["cases"] = cases_json(v.results);
        j["summary"] = summary_json(v.summary);
        if (o.by_source) j["by_source"] = summary_json(v.by_source);
        if (!v.checks.empty()) j["pins"] = pins_json(v.checks);
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::string out = cases_text(v.results);
        out += "\nsummary (mean absolute percentage error; memory figures: measured inside the plan's band, and the "
               "band's median half-width)\n" + summary_text(v.summary, false);
        if (o.by_source) out += "\nby source (case-id prefix)\n" + summary_text(v.by_source, true);
        if (!v.checks.empty()) out += "\npins (" + o.pins + ")\n" + pins_text(v.checks);
        std::cout << out;
    }
}

int run(Options o) {
    if (o.fit_band) return fit_band(o);
    if (o.leave_out) {
        if (!o.only.empty()) throw InputError("", "--quantity", "--leave-out reports every quantity: drop --quantity");
        return run_leave_out({o.csvs, o.pins, o.reason, o.json, o.csv_out, o.update_pins});
    }
    if (o.csvs.size() != 1)
        throw InputError(o.csvs.at(1), "cases", "validate takes one cases file (several only with --fit-band or --leave-out)");
    o.csv = o.csvs.front();
    const auto cases = read_cases(o.csv);
    if (o.update_pins && o.pins.empty()) throw InputError("", "--update-pins", "needs --pins FILE");
    if (o.update_pins && !o.only.empty()) throw InputError("", "--update-pins", "pins cover every quantity: drop --quantity");
    const bool pins_exist = !o.pins.empty() && (!o.update_pins || fs::exists(o.pins));
    const std::vector<Pin> pins = pins_exist ? read_pins(o.pins) : std::vector<Pin>{};
    const fs::path csv_path(o.csv);
    const std::string dir = csv_path.has_parent_path() ? csv_path.parent_path().string() : std::string(".");
    ValidationOutput v;
    for (const auto& c : cases)
        if (o.only.empty() || c.quantity == o.only) v.results.push_back(run_case(c, dir));
    v.summary = summarise(v.results);
    if (o.by_source || !o.pins.empty()) v.by_source = summarise_by_source(v.results);
    std::vector<QuantitySummary> all = v.summary;
    all.insert(all.end(), v.by_source.begin(), v.by_source.end());
    if (o.update_pins) return update_pins(o, pins, all);
    if (!pins.empty()) {
        v.checks = check_pins(pins, cases_relative_to_pins(o.csv, o.pins), all);
        if (v.checks.empty()) throw InputError(o.pins, "cases", "no pin names " + cases_relative_to_pins(o.csv, o.pins));
    }
    print_validation(o, v);
    bool all_ok = true;
    for (const auto& c : v.checks)
        if (!c.ok) {
            std::cerr << "pin: " << c.message << "\n";
            all_ok = false;
        }
    return all_ok ? 0 : kPinExceededExit;
}

const Register reg{Command{
    "validate", "run every validation case and print predicted vs measured with the error per quantity",
    [](CLI::App& sub) -> std::function<int()> {
        auto o = std::make_shared<Options>();
        sub.add_option("cases", o->csvs, "cases.csv (columns id,job,quantity,measured,unit,source,note[,quality]); several with --fit-band or --leave-out")
            ->required();
        auto* json = sub.add_flag("--json", o->json, "print one JSON document");
        sub.add_flag("--csv", o->csv_out, "print one CSV row per case (docs/output.md)")->excludes(json);
        sub.add_option("--quantity", o->only, "only cases of this quantity");
        sub.add_flag("--by-source", o->by_source, "also summarise per source (case-id prefix: lf, lg, tune, ...)");
        sub.add_option("--pins", o->pins, "pinned figures (validation/pins.csv): exit 3 when a MAPE is above its pin");
        sub.add_flag("--update-pins", o->update_pins, "write this cases file's current figures into --pins");
        sub.add_option("--reason", o->reason, "why a pin rises (required when --update-pins raises one)");
        sub.add_flag("--leave-out", o->leave_out,
                     "leave one source out: refit every calibrated setting without each source and predict it; per "
                     "source and quantity the left-out, in-sample and uncalibrated MAPE (several cases files: one pool; "
                     "--pins checks validation/pins_left_out.csv; docs/validation.md)");
        auto* band = sub.add_flag("--fit-band", o->fit_band,
                                  "fit the memory band's fractions on the memory cases of every cases file given; print "
                                  "the band in use, the fitted one and, per source, the share held when fitted without it");
        band->excludes(json);
        return [o] { return run(*o); };
    }}};

}  // namespace
}  // namespace ftb::cli
