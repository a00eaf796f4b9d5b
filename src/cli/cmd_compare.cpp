// `ftbound compare JOB.yaml --hardware A,B,... [--json] [--set KEY=VALUE]...`
#include <iostream>

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
    bool json = false;
    std::string html;
    std::vector<std::string> sets;
};

const Register reg{Command{
    "compare", "the same job on several systems side by side (GPU and CPU servers): fit, time, cost, energy, bottleneck",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<CompareArgs>();
        sub.add_option("job", a->job, "job file")->required();
        sub.add_option("--hardware", a->hardware, "comma-separated catalog systems (or system files)")->required();
        sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_option("--html", a->html, "also write the comparison as a self-contained HTML page with charts");
        sub.add_option("--set", a->sets, "override a job-file field")->take_all();
        return [a] {
            const auto systems = split_system_list(a->hardware);
            if (systems.empty()) throw InputError("command line", "--hardware", "name at least one system");
            Json doc = load_document(a->job);
            if (!doc.is_object()) throw InputError(a->job, "", "the job file must be a mapping");
            for (const auto& s : a->sets) apply_override(doc, s, a->job);
            const auto rows = compare_systems(doc, a->job, systems);
            const std::string json_text = compare_json(rows).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            if (!a->html.empty()) web::write_report(a->html, web::ReportKind::compare, json_text, "ftbound compare: " + a->job);
            const std::string out = a->json ? json_text : compare_text(rows);
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
