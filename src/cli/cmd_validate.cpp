// `ftbound validate CASES.csv [--json|--csv]`: predicted vs measured per case, MAPE and worst case per quantity.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "report/csv.hpp"
#include "report/table.hpp"
#include "validate/validation.hpp"

namespace ftb::cli {
namespace {

std::string fmt_value(double v) {
    if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) return fmt::format("{:.4g}", v);
    return fmt::format("{:.4g}", v);
}

const Register reg{Command{
    "validate", "run every validation case and print predicted vs measured with the error per quantity",
    [](CLI::App& sub) -> std::function<int()> {
        auto csv = std::make_shared<std::string>();
        auto json = std::make_shared<bool>(false);
        auto as_csv = std::make_shared<bool>(false);
        auto only = std::make_shared<std::string>();
        sub.add_option("cases", *csv, "cases.csv (columns id,job,quantity,measured,unit,source,note[,quality])")->required();
        auto* json_flag = sub.add_flag("--json", *json, "print one JSON document");
        sub.add_flag("--csv", *as_csv, "print one CSV row per case (docs/output.md)")->excludes(json_flag);
        sub.add_option("--quantity", *only, "only cases of this quantity");
        return [csv, json, as_csv, only] {
            const auto cases = read_cases(*csv);
            const std::string dir = std::filesystem::path(*csv).has_parent_path()
                                        ? std::filesystem::path(*csv).parent_path().string()
                                        : std::string(".");
            std::vector<CaseResult> results;
            for (const auto& c : cases) {
                if (!only->empty() && c.quantity != *only) continue;
                results.push_back(run_case(c, dir));
            }
            const auto summary = summarise(results);
            std::string out;
            if (*as_csv) {
                CsvTable t({"id", "quantity", "quality", "unit", "measured", "predicted", "error_percent", "skipped"});
                for (const auto& r : results)
                    t.add({r.c.id, r.c.quantity, r.c.quality, r.c.unit, csv_value(r.c.measured),
                           r.predicted ? csv_value(*r.predicted) : "", r.predicted ? csv_value(100 * r.error_fraction) : "",
                           r.predicted ? "" : r.skipped});
                out = t.str();
            } else if (*json) {
                nlohmann::ordered_json j;
                auto rows = nlohmann::ordered_json::array();
                for (const auto& r : results) {
                    nlohmann::ordered_json row = {{"id", r.c.id}, {"quantity", r.c.quantity}, {"quality", r.c.quality},
                                                  {"unit", r.c.unit}, {"measured", r.c.measured}};
                    if (r.predicted) {
                        row["predicted"] = *r.predicted;
                        row["error_percent"] = 100 * r.error_fraction;
                    } else {
                        row["predicted"] = nullptr;
                        row["skipped"] = r.skipped;
                    }
                    rows.push_back(row);
                }
                j["cases"] = rows;
                auto sums = nlohmann::ordered_json::array();
                for (const auto& s : summary)
                    sums.push_back({{"quantity", s.quantity}, {"qualities", s.qualities}, {"cases", s.cases},
                                    {"mape_percent", 100 * s.mape}, {"worst_id", s.worst_id},
                                    {"worst_error_percent", 100 * s.worst_error}, {"beyond_30_percent", s.beyond_30}});
                j["summary"] = sums;
                out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            } else {
                TextTable t({"case", "quantity", "quality", "measured", "predicted", "error"},
                            {false, false, false, true, true, true});
                int skipped = 0;
                for (const auto& r : results) {
                    if (!r.predicted) {
                        ++skipped;
                        continue;
                    }
                    t.add({r.c.id, r.c.quantity, r.c.quality, fmt_value(r.c.measured) + " " + r.c.unit,
                           fmt_value(*r.predicted), fmt::format("{:+.1f}%", 100 * r.error_fraction)});
                }
                out += t.str();
                if (skipped) {
                    out += fmt::format("\n{} case(s) not predicted:\n", skipped);
                    for (const auto& r : results)
                        if (!r.predicted) out += "  " + r.c.id + ": " + r.skipped + "\n";
                }
                out += "\nsummary (mean absolute percentage error)\n";
                TextTable s({"quantity", "qualities", "cases", "MAPE", "worst case", "worst error", ">30%"},
                            {false, false, true, true, false, true, true});
                for (const auto& q : summary)
                    s.add({q.quantity, q.qualities, std::to_string(q.cases), fmt::format("{:.1f}%", 100 * q.mape),
                           q.worst_id, fmt::format("{:+.1f}%", 100 * q.worst_error), std::to_string(q.beyond_30)});
                out += s.str();
            }
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
