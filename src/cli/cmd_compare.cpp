// `ftbound compare JOB.yaml --hardware A,B,... [--nodes 1,2,4] [--price NAME=PER_HOUR]... [--json | --csv]
//                 [--set KEY=VALUE]...`
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <cmath>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "ops/compare.hpp"
#include "report/csv.hpp"
#include "report/plan_report.hpp"
#include "report/table.hpp"

namespace ftb::cli {
namespace {

using OJson = nlohmann::ordered_json;

struct CompareArgs {
    std::string job;
    std::string hardware;
    std::string nodes;
    std::vector<std::string> prices;
    bool json = false;
    bool csv = false;
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

std::vector<int> parse_nodes(const std::string& text) {
    std::vector<int> out;
    for (const auto& item : split_list(text)) {
        int n = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
        if (ec != std::errc() || end != item.data() + item.size() || n < 1 || n > (1 << 20))
            throw InputError("command line", "--nodes", "'" + item + "' is not a node count (1 to 1048576)");
        out.push_back(n);
    }
    if (out.empty()) throw InputError("command line", "--nodes", "give node counts, e.g. --nodes 1,2,4");
    return out;
}

std::map<std::string, double> parse_prices(const std::vector<std::string>& items, const std::vector<std::string>& systems) {
    std::map<std::string, double> out;
    for (const auto& item : items) {
        const auto eq = item.find('=');
        const std::string name = item.substr(0, eq);
        double v = 0;
        const char* first = eq == std::string::npos ? nullptr : item.data() + eq + 1;
        const char* last = item.data() + item.size();
        const auto [end, ec] = first ? std::from_chars(first, last, v) : std::from_chars_result{nullptr, std::errc::invalid_argument};
        if (eq == std::string::npos || ec != std::errc() || end != last || !std::isfinite(v) || v < 0)
            throw InputError("command line", "--price", "'" + item + "': give NAME=PER_HOUR, e.g. --price dell-poweredge-r760-2x-xeon-8480=12.5");
        if (std::find(systems.begin(), systems.end(), name) == systems.end())
            throw InputError("command line", "--price", "'" + name + "' is not one of the --hardware systems");
        out[name] = v;
    }
    return out;
}

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
                          "energy_kwh", "cost", "cost_detail", "reliability", "storage", "power"})
        row[k] = p[k];
    row["cost_per_million_tokens"] = optional_number(r.cost_per_million_tokens);
    row["energy_kwh_per_million_tokens"] = optional_number(r.energy_kwh_per_million_tokens);
    return row;
}

// The cells of one row, shared by the text table and CSV.
struct Cells {
    std::string devices, fits, memory, step, tokens_per_second, time_to_train, cost, cost_per_mtok, kwh_per_mtok,
        bottleneck;
};

Cells cells(const CompareRow& r) {
    const Plan& p = *r.plan;
    const Job& j = *r.job;
    const bool len = p.ops.has_job_length;
    Cells c;
    c.devices = fmt::format("{} x {}", j.system.total_devices(), j.system.device.name);
    c.fits = !p.memory.fits || !p.memory.host_fits ? "NO" : p.memory.verdict == MemoryVerdict::tight ? "tight" : "yes";
    c.memory = fmt_bytes(p.memory.device_used_bytes);
    c.step = fmt_seconds(p.time.step_seconds);
    c.tokens_per_second = fmt::format("{:.0f}", p.time.tokens_per_second);
    c.time_to_train = len && p.time.time_to_train_seconds ? fmt_seconds(*p.time.time_to_train_seconds) : "-";
    c.cost = len && p.ops.energy.total_cost ? fmt::format("{:.2f}", *p.ops.energy.total_cost) : "-";
    c.cost_per_mtok = r.cost_per_million_tokens ? fmt::format("{:.3g}", *r.cost_per_million_tokens) : "-";
    c.kwh_per_mtok = r.energy_kwh_per_million_tokens ? fmt::format("{:.3g}", *r.energy_kwh_per_million_tokens) : "-";
    c.bottleneck = fmt::format("{} {:.0f}%", to_string(p.time.bottleneck), 100 * p.time.bottleneck_share);
    return c;
}

std::string text_table(const std::vector<CompareRow>& rows) {
    TextTable t({"system", "nodes", "devices", "fits", "mem/device", "step", "tokens/s", "time to train", "cost",
                 "cost/Mtok", "kWh/Mtok", "bottleneck"},
                {false, true, false, false, true, true, true, true, true, true, true, false});
    std::string notes;
    for (const auto& r : rows) {
        const std::string label = rows.size() > 1 && r.nodes > 1 ? fmt::format("{} x{}", r.system, r.nodes) : r.system;
        for (const auto& a : r.adapted) notes += "  " + label + ": " + a + "\n";
        if (!r.plan) {
            t.add({r.system, std::to_string(r.nodes), "-", "error", "-", "-", "-", "-", "-", "-", "-", "-"});
            notes += "  " + label + ": " + r.error + "\n";
            continue;
        }
        const Cells c = cells(r);
        t.add({r.system, std::to_string(r.nodes), c.devices, c.fits, c.memory, c.step, c.tokens_per_second, c.time_to_train,
               c.cost, c.cost_per_mtok, c.kwh_per_mtok, c.bottleneck});
        if (r.plan->memory.verdict != MemoryVerdict::fits || !r.plan->memory.host_fits)
            notes += "  " + label + ": " + memory_verdict(*r.job, r.plan->memory) + "\n";
        if (r.plan->ops.price)
            notes += fmt::format("  {}: priced at {:.2f} per node-hour ({}{})\n", label, r.plan->ops.price->per_node_hour,
                                 r.plan->ops.price->basis,
                                 r.plan->ops.price->date.empty() ? "" : ", " + r.plan->ops.price->date);
    }
    return t.str() + (notes.empty() ? "" : "\n" + notes);
}

std::string csv_table(const std::vector<CompareRow>& rows) {
    std::string out = csv_line({"system", "nodes", "devices", "fits", "device_used_bytes", "step_seconds", "tokens_per_second",
                                "time_to_train_seconds", "cost", "cost_per_million_tokens", "energy_kwh",
                                "energy_kwh_per_million_tokens", "bottleneck", "bottleneck_share", "adapted", "error"});
    auto num = [](const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
    for (const auto& r : rows) {
        std::string adapted;
        for (const auto& a : r.adapted) adapted += (adapted.empty() ? "" : "; ") + a;
        if (!r.plan) {
            out += csv_line({r.system, std::to_string(r.nodes), "", "", "", "", "", "", "", "", "", "", "", "", adapted, r.error});
            continue;
        }
        const Plan& p = *r.plan;
        const bool len = p.ops.has_job_length;
        out += csv_line({r.system, std::to_string(r.nodes), std::to_string(r.job->system.total_devices()),
                         p.memory.fits && p.memory.host_fits ? "true" : "false", fmt::format("{:.0f}", p.memory.device_used_bytes),
                         fmt::format("{:.6g}", p.time.step_seconds), fmt::format("{:.6g}", p.time.tokens_per_second),
                         len ? num(p.time.time_to_train_seconds) : "", len ? num(p.ops.energy.total_cost) : "",
                         num(r.cost_per_million_tokens), len ? fmt::format("{:.6g}", p.ops.energy.energy_kwh) : "",
                         num(r.energy_kwh_per_million_tokens), to_string(p.time.bottleneck),
                         fmt::format("{:.4f}", p.time.bottleneck_share), adapted, ""});
    }
    return out;
}

const Register reg{Command{
    "compare", "the same job on several systems side by side (GPU and CPU servers): fit, time, cost, energy, bottleneck",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<CompareArgs>();
        sub.add_option("job", a->job, "job file")->required();
        sub.add_option("--hardware", a->hardware, "comma-separated catalog systems (or system files)")->required();
        sub.add_option("--nodes", a->nodes, "node counts to compare, e.g. 1,2,4 (default: the job's)");
        sub.add_option("--price", a->prices, "a system's price per node-hour, NAME=PER_HOUR (repeatable)")->take_all();
        sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_flag("--csv", a->csv, "print one CSV table");
        sub.add_option("--set", a->sets, "override a job-file field")->take_all();
        return [a] {
            if (a->json && a->csv) throw InputError("command line", "--csv", "give --json or --csv, not both");
            CompareOptions opt;
            opt.systems = split_list(a->hardware);
            if (opt.systems.empty()) throw InputError("command line", "--hardware", "name at least one system");
            if (!a->nodes.empty()) opt.nodes = parse_nodes(a->nodes);
            opt.price_per_node_hour = parse_prices(a->prices, opt.systems);
            Json doc = load_document(a->job);
            if (!doc.is_object()) throw InputError(a->job, "", "the job file must be a mapping");
            for (const auto& s : a->sets) apply_override(doc, s, a->job);
            const auto rows = compare_systems(doc, a->job, opt);
            std::string out;
            if (a->json) {
                OJson arr = OJson::array();
                for (const auto& r : rows) arr.push_back(row_json(r));
                OJson j;
                j["rows"] = arr;
                out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            } else if (a->csv) {
                out = csv_table(rows);
            } else {
                out = text_table(rows);
            }
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
