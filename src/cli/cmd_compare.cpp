// `ftbound compare JOB.yaml --hardware A,B,... [--json] [--set KEY=VALUE]...`
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "ops/compare.hpp"
#include "report/plan_report.hpp"
#include "report/table.hpp"

namespace ftb::cli {
namespace {

struct CompareArgs {
    std::string job;
    std::string hardware;
    bool json = false;
    std::vector<std::string> sets;
};

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

const Register reg{Command{
    "compare", "the same job on several systems side by side (GPU and CPU servers): fit, time, cost, energy, bottleneck",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<CompareArgs>();
        sub.add_option("job", a->job, "job file")->required();
        sub.add_option("--hardware", a->hardware, "comma-separated catalog systems (or system files)")->required();
        sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_option("--set", a->sets, "override a job-file field")->take_all();
        return [a] {
            const auto systems = split_list(a->hardware);
            if (systems.empty()) throw InputError("command line", "--hardware", "name at least one system");
            Json doc = load_document(a->job);
            if (!doc.is_object()) throw InputError(a->job, "", "the job file must be a mapping");
            for (const auto& s : a->sets) apply_override(doc, s, a->job);
            const auto rows = compare_systems(doc, a->job, systems);
            std::string out;
            if (a->json) {
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
                out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            } else {
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
                out = t.str() + (notes.empty() ? "" : "\n" + notes);
            }
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
