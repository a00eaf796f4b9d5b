#include "report/compare_report.hpp"

#include <fmt/format.h>

#include "report/plan_report.hpp"
#include "report/table.hpp"

namespace ftb {

nlohmann::ordered_json compare_json(const std::vector<CompareRow>& rows) {
    nlohmann::ordered_json j;
    auto arr = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
        nlohmann::ordered_json row;
        row["system"] = r.system;
        if (r.plan) {
            nlohmann::ordered_json p = plan_json(*r.job, *r.plan);
            for (const char* k : {"gpus", "memory", "step", "throughput", "bottleneck", "time_to_train_seconds",
                                  "energy_kwh", "cost", "reliability", "power", "limits"})
                row[k] = p[k];
        } else {
            row["error"] = r.error;
        }
        row["adjustments"] = r.adjustments;
        arr.push_back(row);
    }
    j["rows"] = arr;
    return j;
}

std::string compare_text(const std::vector<CompareRow>& rows) {
    TextTable t({"system", "devices", "fits", "mem/device", "step", "tokens/s", "time to train", "cost", "energy kWh",
                 "bottleneck"},
                {false, false, false, true, true, true, true, true, true, false});
    std::string notes;
    for (const auto& r : rows) {
        if (!r.plan) {
            t.add({r.system, "-", "error", "-", "-", "-", "-", "-", "-", "-"});
            notes += "  " + r.system + ": " + r.error + "\n";
            continue;
        }
        const Plan& p = *r.plan;
        const Job& j = *r.job;
        const bool len = p.ops.has_job_length;
        t.add({r.system,
               fmt::format("{} x {}", j.system.total_devices(), j.system.device.name),
               !p.memory.fits || !p.memory.host_fits ? "NO" : p.memory.verdict == MemoryVerdict::tight ? "tight" : "yes",
               fmt_bytes(p.memory.device_used_bytes),
               fmt_seconds(p.time.step_seconds),
               fmt::format("{:.0f}", p.time.tokens_per_second),
               len && p.time.time_to_train_seconds ? fmt_seconds(*p.time.time_to_train_seconds) : "-",
               len && p.ops.energy.total_cost ? fmt::format("{:.2f}", *p.ops.energy.total_cost) : "-",
               len ? fmt::format("{:.1f}", p.ops.energy.energy_kwh) : "-",
               fmt::format("{} {:.0f}%", to_string(p.time.bottleneck), 100 * p.time.bottleneck_share)});
        for (const auto& adj : r.adjustments) notes += "  " + r.system + ": " + adj + "\n";
        if (p.memory.verdict != MemoryVerdict::fits) notes += "  " + r.system + ": " + memory_verdict(j, p.memory) + "\n";
    }
    return t.str() + (notes.empty() ? "" : "\n" + notes);
}

}  // namespace ftb
