// `ftbound plan JOB.yaml [--json] [--set KEY=VALUE]...`
#include <iostream>

#include "cli/command.hpp"
#include "ftbound/plan.hpp"
#include "report/plan_report.hpp"
#include "spec/job_file.hpp"
#include "web/html_page.hpp"

namespace ftb::cli {
namespace {

struct PlanArgs {
    std::string job;
    bool json = false;
    std::string html;
    std::vector<std::string> sets;
};

const Register reg{Command{
    "plan", "predict memory, limits and what would make a fine-tuning job fit",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<PlanArgs>();
        sub.add_option("job", a->job, "job file (YAML or JSON)")->required();
        sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_option("--html", a->html, "also write the plan as a self-contained HTML page with charts");
        sub.add_option("--set", a->sets, "override a job-file field: --set train.micro_batch=8")->take_all();
        return [a] {
            const Job job = load_job(a->job, a->sets);
            const Plan plan = make_plan(job);
            const std::string json_text =
                plan_json(job, plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            if (!a->html.empty()) web::write_report(a->html, web::ReportKind::plan, json_text, "ftbound plan: " + a->job);
            const std::string out = a->json ? json_text : plan_text(job, plan);
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
