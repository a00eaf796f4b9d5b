// `ftbound compare JOB.yaml --hardware A,B,... [--nodes 1,2,4] [--price NAME=PER_HOUR]... [--json | --csv]
//                 [--html FILE] [--set KEY=VALUE]...`
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
#include "report/compare_report.hpp"
#include "web/html_page.hpp"

namespace ftb::cli {
namespace {

struct CompareArgs {
    std::string job;
    std::string hardware;
    std::string nodes;
    std::vector<std::string> prices;
    bool json = false;
    bool csv = false;
    std::string html;
    std::vector<std::string> sets;
};

std::vector<int> parse_nodes(const std::string& text) {
    std::vector<int> out;
    for (const auto& item : split_system_list(text)) {
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
        sub.add_option("--html", a->html, "also write the comparison as a self-contained HTML page with charts");
        sub.add_option("--set", a->sets, "override a job-file field")->take_all();
        return [a] {
            if (a->json && a->csv) throw InputError("command line", "--csv", "give --json or --csv, not both");
            CompareOptions opt;
            opt.systems = split_system_list(a->hardware);
            if (opt.systems.empty()) throw InputError("command line", "--hardware", "name at least one system");
            if (!a->nodes.empty()) opt.nodes = parse_nodes(a->nodes);
            opt.price_per_node_hour = parse_prices(a->prices, opt.systems);
            Json doc = load_document(a->job);
            if (!doc.is_object()) throw InputError(a->job, "", "the job file must be a mapping");
            for (const auto& s : a->sets) apply_override(doc, s, a->job);
            const auto rows = compare_systems(doc, a->job, opt);
            const std::string json_text = compare_json(rows).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            if (!a->html.empty()) web::write_report(a->html, web::ReportKind::compare, json_text, "ftbound compare: " + a->job);
            const std::string out = a->json ? json_text : a->csv ? compare_csv(rows) : compare_text(rows);
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
