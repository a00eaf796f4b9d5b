// `ftbound plan JOB.yaml [--json] [--set KEY=VALUE]...`
#include <iostream>

#include "cli/command.hpp"
#include "cli/import_options.hpp"
#include "ftbound/error.hpp"
#include "ftbound/plan.hpp"
#include "report/csv.hpp"
#include "report/plan_report.hpp"
#include "spec/job_file.hpp"
#include "web/html_page.hpp"

namespace ftb::cli {
namespace {

struct PlanArgs {
    std::string job;
    bool json = false;
    bool csv = false;
    std::string html;
    std::vector<std::string> sets;
    std::string from;          // --from CONFIG: plan another tool's config (cmd_import.cpp)
    ImportFlags import;
};

// One header row and one row: the scalar figures of plan --json, dotted (lists such as step.breakdown left out).
std::string plan_csv(const Job& job, const Plan& plan) {
    const auto columns = csv_columns(plan_json(job, plan));
    std::vector<std::string> header, row;
    for (const auto& [k, v] : columns) header.push_back(k), row.push_back(v);
    CsvTable t(header);
    t.add(row);
    return t.str();
}

// plan --json's document, as printed and as the HTML page embeds it.
std::string plan_json_text(const Job& job, const Plan& plan) {
    return plan_json(job, plan).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Job job_of(const PlanArgs& a) {
    if (a.from.empty()) {
        if (a.job.empty()) throw InputError("command line", "job", "give a job file, or --from CONFIG");
        return load_job(a.job, a.sets);
    }
    if (!a.job.empty()) throw InputError("command line", "--from", "give a job file or --from CONFIG, not both");
    ImportFlags flags = a.import;
    flags.sets = a.sets;
    const auto [imported, report] = imported_job(a.from, flags);
    std::cerr << report;
    Json doc = Json::parse(imported.job.dump());
    for (const auto& s : a.sets) apply_override(doc, s, a.from);
    return job_from_document(doc, a.from, a.sets);
}

const Register reg{Command{
    "plan", "predict memory, limits and what would make a fine-tuning job fit",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<PlanArgs>();
        sub.add_option("job", a->job, "job file (YAML or JSON)");
        auto* json = sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_flag("--csv", a->csv, "print the figures as CSV: a header row and one row (docs/output.md)")->excludes(json);
        sub.add_option("--html", a->html, "also write the plan as a self-contained HTML page with charts");
        sub.add_option("--set", a->sets, "override a job-file field: --set train.micro_batch=8")->take_all();
        sub.add_option("--from", a->from, "plan an axolotl/LLaMA-Factory/torchtune/HF/torchtitan config (see `ftbound import`)");
        sub.add_option("--deepspeed", a->import.deepspeed, "with --from: the DeepSpeed JSON of an HF TrainingArguments config");
        sub.add_option("--accelerate", a->import.accelerate, "with --from: an accelerate config");
        sub.add_option("--hardware", a->import.hardware, "with --from: the catalog system to plan on");
        return [a] {
            const Job job = job_of(*a);
            const Plan plan = make_plan(job);
            // Serialised only when printed or drawn: a text plan has no use for it (~20% of a text plan's CPU).
            std::string json_text;
            if (a->json || !a->html.empty()) json_text = plan_json_text(job, plan);
            if (!a->html.empty())
                web::write_report(a->html, web::ReportKind::plan, json_text, "ftbound plan: " + (a->from.empty() ? a->job : a->from));
            std::string out;
            if (a->json) out = json_text;
            else if (a->csv) out = plan_csv(job, plan);
            else out = plan_text(job, plan);
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
