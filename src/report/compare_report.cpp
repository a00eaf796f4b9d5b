#include "report/compare_report.hpp"

#include <fmt/format.h>

#include "report/csv.hpp"
#include "report/plan_report.hpp"
#include "report/table.hpp"

namespace ftb {
namespace {

using OJson = nlohmann::ordered_json;

OJson optional_number(const std::optional<double>& v) { return v ? OJson(*v) : OJson(nullptr); }

OJson row_json(const CompareRow& r) {
    OJson row;
    row["system"] = r.system;
    row["nodes"] = r.nodes;
    row["adapted"] = r.adapted;
    if (!r.plan) {
        row["error"] = r.error;
        return row;
    }
    OJson p = plan_json(*r.job, *r.plan);
    for (const char* k : {"gpus", "memory", "limits", "step", "throughput", "bottleneck", "weak_points", "time_to_train_seconds",
                          "energy_kwh", "cost", "cost_detail", "reliability", "storage", "power", "accuracy_notes"})
        row[k] = p[k];
    row["cost_per_million_tokens"] = optional_number(r.cost_per_million_tokens);
    row["energy_kwh_per_million_tokens"] = optional_number(r.energy_kwh_per_million_tokens);
    return row;
}

std::string fits_word(const MemoryResult& m) {
    return !m.fits || !m.host_fits ? "NO" : m.verdict == MemoryVerdict::tight ? "tight" : "yes";
}

std::string row_label(const std::vector<CompareRow>& rows, const CompareRow& r) {
    bool sweep = false;
    for (const auto& o : rows) sweep |= o.nodes != rows.front().nodes;
    return sweep ? fmt::format("{} x{}", r.system, r.nodes) : r.system;
}

}  // namespace

OJson compare_json(const std::vector<CompareRow>& rows) {
    OJson arr = OJson::array();
    for (const auto& r : rows) arr.push_back(row_json(r));
    OJson j;
    j["rows"] = arr;
    return j;
}

std::string compare_text(const std::vector<CompareRow>& rows) {
    TextTable t({"system", "nodes", "devices", "fits", "mem/device", "step", "tokens/s", "time to train", "cost",
                 "cost/Mtok", "kWh/Mtok", "bottleneck"},
                {false, true, false, false, true, true, true, true, true, true, true, false});
    std::string notes;
    for (const auto& r : rows) {
        const std::string label = row_label(rows, r);
        for (const auto& a : r.adapted) notes += "  " + label + ": " + a + "\n";
        if (!r.plan) {
            t.add({r.system, std::to_string(r.nodes), "-", "error", "-", "-", "-", "-", "-", "-", "-", "-"});
            notes += "  " + label + ": " + r.error + "\n";
            continue;
        }
        const Plan& p = *r.plan;
        const Job& j = *r.job;
        const bool len = p.ops.has_job_length;
        t.add({r.system, std::to_string(r.nodes), fmt::format("{} x {}", j.system.total_devices(), j.system.device.name),
               fits_word(p.memory), fmt_bytes(p.memory.device_used_bytes), fmt_seconds(p.time.step_seconds),
               fmt::format("{:.0f}", p.time.tokens_per_second),
               len && p.time.time_to_train_seconds ? fmt_seconds(*p.time.time_to_train_seconds) : "-",
               len && p.ops.energy.total_cost ? fmt::format("{:.2f}", *p.ops.energy.total_cost) : "-",
               r.cost_per_million_tokens ? fmt::format("{:.3g}", *r.cost_per_million_tokens) : "-",
               r.energy_kwh_per_million_tokens ? fmt::format("{:.3g}", *r.energy_kwh_per_million_tokens) : "-",
               fmt::format("{} {:.0f}%", to_string(p.time.bottleneck), 100 * p.time.bottleneck_share)});
        if (p.memory.verdict != MemoryVerdict::fits || !p.memory.host_fits)
            notes += "  " + label + ": " + memory_verdict(j, p.memory) + "\n";
        if (p.ops.price)
            notes += fmt::format("  {}: priced at {:.2f} per node-hour ({}{})\n", label, p.ops.price->per_node_hour,
                                 p.ops.price->basis, p.ops.price->date.empty() ? "" : ", " + p.ops.price->date);
        for (const auto& a : p.accuracy_notes) notes += "  " + label + ": accuracy: " + a + "\n";
    }
    return t.str() + (notes.empty() ? "" : "\n" + notes);
}

std::string compare_csv(const std::vector<CompareRow>& rows) {
    CsvTable t({"system", "nodes", "devices", "fits", "device_used_bytes", "step_seconds", "tokens_per_second",
                "time_to_train_seconds", "cost", "cost_per_million_tokens", "energy_kwh", "energy_kwh_per_million_tokens",
                "bottleneck", "bottleneck_share", "adapted", "error"});
    auto num = [](const std::optional<double>& v) { return v ? csv_value(*v) : std::string(); };
    for (const auto& r : rows) {
        std::string adapted;
        for (const auto& a : r.adapted) adapted += (adapted.empty() ? "" : "; ") + a;
        if (!r.plan) {
            t.add({r.system, std::to_string(r.nodes), "", "", "", "", "", "", "", "", "", "", "", "", adapted, r.error});
            continue;
        }
        const Plan& p = *r.plan;
        const bool len = p.ops.has_job_length;
        t.add({r.system, std::to_string(r.nodes), std::to_string(r.job->system.total_devices()),
               p.memory.fits && p.memory.host_fits ? "true" : "false", csv_value(p.memory.device_used_bytes),
               csv_value(p.time.step_seconds), csv_value(p.time.tokens_per_second),
               len ? num(p.time.time_to_train_seconds) : "", len ? num(p.ops.energy.total_cost) : "",
               num(r.cost_per_million_tokens), len ? csv_value(p.ops.energy.energy_kwh) : "",
               num(r.energy_kwh_per_million_tokens), to_string(p.time.bottleneck), csv_value(p.time.bottleneck_share),
               adapted, ""});
    }
    return t.str();
}

}  // namespace ftb
