// `ftbound diagnose TRACE.json[.gz]... [--json] [--plan JOB.yaml] [--set K=V]... [--partial]`: the measured
// breakdown of a real run from PyTorch profiler traces, one file per rank (CONTRACT.md, docs/diagnose.md);
// `--summary-out FILE` per rank and `--merge SUMMARY...` for thousands of ranks (docs/cluster.md).
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cluster/launcher_env.hpp"
#include "ftbound/error.hpp"
#include "ftbound/plan.hpp"
#include "ftbound/plan_api.hpp"
#include "spec/catalog_names.hpp"
#include "spec/job_file.hpp"
#include "trace/diagnose_report.hpp"
#include "trace/diagnose_summary.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_file.hpp"
#include "web/html_page.hpp"

namespace ftb::cli {

namespace {

struct DiagnoseOptions {
    std::vector<std::string> traces;
    bool json = false;
    std::string html;
    bool partial = false;
    std::string plan_job;
    std::vector<std::string> overrides;
    std::string summary_out;  // write this one trace's summary there
    bool merge = false;       // the inputs are summaries (or folders of them)
};

// ---- --plan: the prediction set beside the measurement (planner interface: ftbound/plan_api.hpp) ----
struct PlanComparison {
    nlohmann::json json;
    std::string text;
    std::vector<std::string> warnings;   // also on stderr
};

// Signs that the trace and the job file describe different runs: another GPU, or a step more than 3x off.
std::vector<std::string> mismatch_warnings(const Job& job, const std::vector<const trace::TraceTables*>& tables,
                                           double measured_s, double predicted_s) {
    std::vector<std::string> w;
    const DeviceSpec& gpu = job.system.device;
    const std::string family = folded_name(gpu.name.substr(0, gpu.name.find('-')));   // "h100" of h100-sxm
    for (const auto* t : tables) {
        for (const auto& d : t->devices) {
            const bool other_part = !family.empty() && folded_name(d.name).find(family) == std::string::npos;
            const bool other_memory = d.total_memory_bytes > 0 && gpu.memory_bytes > 0 &&
                                      std::fabs(double(d.total_memory_bytes) / gpu.memory_bytes - 1) > 0.1;
            if (other_part || other_memory) {
                w.push_back(fmt::format("the trace ran on '{}' ({:.0f} GiB), the plan is for the {} ({:.0f} GiB): compare "
                                        "with a job file for that GPU",
                                        d.name, d.total_memory_bytes / 1073741824.0, gpu.name, gpu.memory_bytes / 1073741824.0));
                break;
            }
        }
        if (!w.empty()) break;
    }
    if (predicted_s > 0 && measured_s > 0 && (measured_s > 3 * predicted_s || measured_s < predicted_s / 3))
        w.push_back(fmt::format("the measured step ({:.4g} s) is {:.1f}x the predicted one ({:.4g} s): the job file may not "
                                "describe this run (micro-batch, sequence length, accumulation, GPUs)",
                                measured_s, measured_s / predicted_s, predicted_s));
    return w;
}

PlanComparison compare_with_plan(const DiagnoseOptions& o, const trace::MeasuredStep& measured,
                                 const trace::Diagnosis& d, const std::vector<const trace::TraceTables*>& tables) {
    const PredictedStep predicted = predict_step_for_job_file(o.plan_job, o.overrides);
    const Job job = load_job(o.plan_job, o.overrides);
    const Plan plan = make_plan(job);
    PlanComparison c;
    nlohmann::json items = nlohmann::json::array();
    for (auto& i : predicted.breakdown) items.push_back({{"phase", i.phase}, {"seconds", i.seconds}, {"resource", i.resource}});
    // Per resource, measured and predicted seconds side by side: the common key of both breakdowns.
    std::map<std::string, std::pair<double, double>> by_resource;
    for (auto& i : measured.breakdown) by_resource[i.resource].first += i.seconds;
    for (auto& i : predicted.breakdown) by_resource[i.resource].second += i.seconds;
    nlohmann::json side = nlohmann::json::array();
    for (auto& [res, mp] : by_resource)
        side.push_back({{"resource", res}, {"measured_seconds", mp.first}, {"predicted_seconds", mp.second}});
    c.json = {{"job", o.plan_job},
              {"predicted", {{"step_seconds", predicted.step_seconds}, {"breakdown", items},
                             {"bottleneck", predicted.bottleneck}}},
              {"measured_step_seconds", measured.step_seconds},
              {"step_ratio_measured_over_predicted",
               predicted.step_seconds > 0 ? nlohmann::json(measured.step_seconds / predicted.step_seconds)
                                          : nlohmann::json(nullptr)},
              {"by_resource", side}};
    c.text = fmt::format("\nmeasured vs predicted ({}): step {:.6f} s vs {:.6f} s; predicted bottleneck {}\n",
                         o.plan_job, measured.step_seconds, predicted.step_seconds, predicted.bottleneck);
    for (auto& [res, mp] : by_resource)
        c.text += fmt::format("  {:<18} {:10.6f} s  {:10.6f} s\n", res, mp.first, mp.second);
    c.warnings = mismatch_warnings(job, tables, measured.step_seconds, predicted.step_seconds);
    c.json["warnings"] = c.warnings;
    // What to change for the bottleneck the trace shows, from the plan's re-planned changes.
    nlohmann::json advice = nlohmann::json::array();
    std::string advice_text;
    for (const auto& r : plan.recommendations) {
        if (to_string(r.addresses) != d.bottleneck.resource) continue;
        std::string sets;
        for (const auto& x : r.set) sets += " --set " + x;
        advice.push_back({{"what", r.what}, {"set", r.set}, {"predicted_speedup", r.speedup}});
        advice_text += fmt::format("    - {}: {:.2f}x tokens/s in the plan  [{}]\n", r.what, r.speedup, sets.empty() ? "" : sets.substr(1));
    }
    c.json["advice"] = advice;
    c.text += "\n  what to change for the measured bottleneck (" + d.bottleneck.resource + "):\n" +
              (advice_text.empty() ? "    (no re-planned change of the job relieves it; see the breakdown above)\n" : advice_text);
    return c;
}
// ---- end of --plan ----

// The report over the ranks' tables (read from traces, or the facts a summary keeps) and their analyses.
int report(const DiagnoseOptions& o, const std::vector<trace::TraceTables>& tables, std::vector<trace::RankAnalysis> per_rank,
           const std::vector<std::string>& files) {
    std::vector<const trace::TraceTables*> views;
    std::vector<trace::InputSummary> inputs;
    for (std::size_t i = 0; i < tables.size(); ++i) {
        views.push_back(&tables[i]);
        inputs.push_back({files[i], &tables[i]});
    }
    const trace::Diagnosis d = trace::diagnose(views, std::move(per_rank), 10);
    const trace::MeasuredStep measured = trace::measured_step(d, views);

    std::optional<PlanComparison> plan;
    if (!o.plan_job.empty()) plan = compare_with_plan(o, measured, d, views);

    std::string out;
    if (o.json || !o.html.empty()) {
        nlohmann::json j = trace::diagnosis_json(d, inputs, measured);
        if (plan) j["plan"] = plan->json;
        out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        if (!o.html.empty())
            web::write_report(o.html, web::ReportKind::diagnose, out, "ftbound diagnose: " + files.front());
    }
    if (!o.json) {
        out = trace::diagnosis_text(d, inputs, measured);
        if (plan) out += plan->text;
    }
    std::cout << out;
    for (auto& t : tables)
        if (!t.complete) std::cerr << "warning: partial trace analysed (" << t.stop_reason << ")\n";
    if (plan)
        for (const auto& w : plan->warnings) std::cerr << "warning: " << o.plan_job << ": " << w << "\n";
    return 0;
}

std::vector<trace::TraceTables> read_traces(const DiagnoseOptions& o) {
    trace::ReadOptions read_options;
    read_options.partial = o.partial;
    std::vector<trace::TraceTables> tables;
    tables.reserve(o.traces.size());
    for (auto& path : o.traces) tables.push_back(trace::read_trace_file(path, read_options));
    return tables;
}

trace::RankAnalysis analyse(const trace::TraceTables& t, std::size_t index, const std::string& file) {
    try {
        // Every kernel kept (not only the top ten): merging ranks then sums each kernel exactly.
        return trace::analyse_rank(t, static_cast<std::int64_t>(index), SIZE_MAX);
    } catch (const InputError& e) {
        throw InputError(file, e.field(), e.reason());
    }
}

// `--summary-out FILE`: this rank's summary, for `--merge` later.
int write_summary(const DiagnoseOptions& o) {
    if (o.traces.size() != 1)
        throw InputError(o.summary_out, "--summary-out",
                         "one trace per summary (" + std::to_string(o.traces.size()) + " given): run one per rank");
    const std::vector<trace::TraceTables> tables = read_traces(o);
    // A trace without distributedInfo.rank takes the launcher's rank (one rank per trace under srun/mpirun).
    const auto launch = cluster::launcher_from_environment(cluster::current_environment());
    const trace::RankAnalysis r = analyse(tables.front(), launch ? static_cast<std::size_t>(launch->rank) : 0, o.traces.front());
    std::ofstream f(o.summary_out, std::ios::binary | std::ios::trunc);
    if (!f || !(f << trace::summary_json(o.traces.front(), tables.front(), r)) || !f.flush())
        throw InputError(o.summary_out, "--summary-out", "cannot write the summary there");
    std::cout << "rank " << r.rank << ": summary of " << o.traces.front() << " written to " << o.summary_out << "\n";
    for (auto& t : tables)
        if (!t.complete) std::cerr << "warning: partial trace analysed (" << t.stop_reason << ")\n";
    return 0;
}

// `--merge SUMMARY...`: the report of all ranks from their summaries.
int merge_summaries(const DiagnoseOptions& o) {
    std::vector<trace::RankSummary> summaries = trace::read_summaries(o.traces);
    std::vector<trace::TraceTables> tables;
    std::vector<trace::RankAnalysis> per_rank;
    std::vector<std::string> files;
    tables.reserve(summaries.size());
    for (auto& s : summaries) {
        tables.push_back(std::move(s.facts));
        per_rank.push_back(std::move(s.analysis));
        files.push_back(std::move(s.trace_file));
    }
    return report(o, tables, std::move(per_rank), files);
}

int run_diagnose(const DiagnoseOptions& o) {
    if (!o.summary_out.empty() && o.merge)
        throw InputError("--summary-out", "--merge", "a run either writes one rank's summary or merges summaries");
    if (!o.summary_out.empty()) return write_summary(o);
    if (o.merge) return merge_summaries(o);
    const std::vector<trace::TraceTables> tables = read_traces(o);
    std::vector<trace::RankAnalysis> per_rank;
    for (std::size_t i = 0; i < tables.size(); ++i) per_rank.push_back(analyse(tables[i], i, o.traces[i]));
    return report(o, tables, std::move(per_rank), o.traces);
}

const Register kDiagnose{{"diagnose", "measured breakdown of a real run from PyTorch profiler traces (one per rank)",
                          [](CLI::App& sub) -> std::function<int()> {
                              auto o = std::make_shared<DiagnoseOptions>();
                              sub.add_option("traces", o->traces,
                                             "TRACE.json[.gz], one per rank (with --merge: summaries, or folders of them)")
                                  ->required();
                              sub.add_option("--summary-out", o->summary_out,
                                             "write this rank's small summary (one trace) for --merge, instead of the report");
                              sub.add_flag("--merge", o->merge,
                                           "the inputs are summaries from --summary-out: the report over all their ranks");
                              sub.add_flag("--json", o->json, "print one JSON document");
                              sub.add_option("--html", o->html,
                                             "also write the diagnosis as a self-contained HTML page with charts");
                              sub.add_flag("--partial", o->partial,
                                           "analyse what a truncated or damaged trace holds, with a warning");
                              sub.add_option("--plan", o->plan_job, "JOB.yaml: set the prediction beside the measurement");
                              sub.add_option("--set", o->overrides, "override a job-file field for --plan (KEY=VALUE)");
                              return [o] { return run_diagnose(*o); };
                          }}};

}  // namespace

}  // namespace ftb::cli
