#include "report/search_report.hpp"

#include <fmt/format.h>

#include "report/plan_report.hpp"
#include "report/table.hpp"
#include "search/explain.hpp"

namespace ftb {

using OJson = nlohmann::ordered_json;

namespace {

bool is_integer_text(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

OJson typed_value(const std::string& v) {
    if (v == "true" || v == "false") return v == "true";
    if (is_integer_text(v)) return std::stoll(v);
    return v;
}

// The job file as read, with the configuration's changes: planning it gives exactly this configuration.
Json planned_document(const Json& doc, const std::vector<std::pair<std::string, std::string>>& changes,
                      const std::string& file) {
    Json d = doc;
    for (const auto& [key, value] : changes) {
        if (key == "hardware.system") {
            Json& hw = d["hardware"];
            for (const char* k : {"gpu", "gpus_per_node", "intra_node", "host"}) hw.erase(k);
            hw["system"] = value;
            continue;
        }
        apply_override(d, key + "=" + value, file);
    }
    return d;
}

ShownConfig show(const Job& base, const Json& doc, const SearchRequest& req, const Layout& job_layout,
                 const Candidate& c) {
    ShownConfig s;
    s.candidate = c;
    const SearchSystem& sys = req.systems[size_t(c.layout.system)];
    s.system = sys.name;
    s.job = apply_layout(base, c.layout, sys.spec);
    s.plan = make_plan(s.job, PlanOptions{false, false, c.metrics.fits, false});
    s.changes = layout_changes(job_layout, c.layout, sys.name);
    s.document = planned_document(doc, s.changes, base.spec.file);
    return s;
}

OJson config_json(const ShownConfig& s, std::optional<int> rank) {
    OJson j;
    if (rank) j["rank"] = *rank;
    j["system"] = s.system;
    j["nodes"] = s.candidate.layout.nodes;
    j["gpus"] = s.candidate.metrics.gpus;
    j["layout"] = layout_summary(s.candidate.layout);
    OJson changes = OJson::object();
    for (const auto& [k, v] : s.changes) changes[k] = typed_value(v);
    j["changes"] = changes;
    j["job"] = OJson::parse(s.document.dump());
    const OJson p = plan_json(s.job, s.plan);
    for (const char* k : {"memory", "step", "throughput", "bottleneck", "time_to_train_seconds", "cost", "energy_kwh"})
        j[k] = p[k];
    // The figures the search ranked by: for the whole job with data.tokens, else for one optimizer step.
    const Metrics& m = s.candidate.metrics;
    const bool job_length = !p["time_to_train_seconds"].is_null();
    j["gpu_hours"] = m.gpu_hours;
    j["ranked"] = {{"per", job_length ? "job" : "optimizer step"},
                   {"time_seconds", m.time_seconds},
                   {"gpu_hours", m.gpu_hours},
                   {"cost", m.cost ? OJson(*m.cost) : OJson(nullptr)},
                   {"energy_kwh", m.energy_kwh}};
    if (!s.why.empty()) j["why"] = s.why;
    return j;
}

std::string money(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "-"; }

void add_row(TextTable& t, const std::string& rank, const ShownConfig& s, bool job_length) {
    const Metrics& m = s.candidate.metrics;
    const TimeResult& tm = s.plan.time;
    if (!m.fits) {   // the nearest when nothing fits: its memory is the story
        t.add({rank, s.system, std::to_string(m.gpus), layout_summary(s.candidate.layout), "-", "-",
               fmt_bytes(m.device_used_bytes) + " of " + fmt_bytes(m.capacity_bytes), "-", "-", "-", "memory_capacity"});
        return;
    }
    t.add({rank, s.system, std::to_string(m.gpus), layout_summary(s.candidate.layout), fmt_seconds(m.step_seconds),
           fmt::format("{:.0f}", m.tokens_per_second), fmt_bytes(m.device_used_bytes),
           job_length ? fmt_seconds(m.time_seconds) : "-", money(m.cost), fmt::format("{:.3g}", m.energy_kwh),
           fmt::format("{} {:.0f}%", to_string(tm.bottleneck), 100 * tm.bottleneck_share)});
}

TextTable config_table(const std::string& what) {
    return TextTable({what, "system", "GPUs", "layout", "step", "tokens/s", "mem/GPU", "time", "cost", "kWh", "bottleneck"},
                     {true, false, true, false, true, true, true, true, true, true, false});
}

std::string set_line(const SearchReport& r, const ShownConfig& s) {
    if (s.changes.empty()) return "the job as written";
    std::string line = "ftbound plan " + r.job_file;
    for (const auto& [k, v] : s.changes) {
        if (k == "hardware.system") return "the job file under best.job in --json (the server changes)";
        line += " --set " + k + "=" + v;
    }
    return line;
}

}  // namespace

SearchReport build_search_report(const Job& job, const Json& document, const SearchRequest& request, SearchResult result) {
    SearchReport r;
    r.job_file = job.spec.file;
    r.objective = request.objective;
    r.top_k = request.top;
    r.result = std::move(result);
    const SearchResult& res = r.result;
    const Layout& own = res.job_layout;
    for (const Candidate& c : res.top) r.top.push_back(show(job, document, request, own, c));
    for (size_t i = 0; i + 1 < r.top.size(); ++i)
        r.top[i].why = reason_over({r.top[i].candidate, r.top[i].plan.time, r.top[i].system},
                                   {r.top[i + 1].candidate, r.top[i + 1].plan.time, r.top[i + 1].system}, int(i + 2),
                                   request.objective);
    if (r.top.size() > request.top) r.top.resize(request.top);   // the extra one only explained the last
    for (const Candidate& c : res.front) r.front.push_back(show(job, document, request, own, c));
    if (res.bound_by && res.bound_by->nearest) r.nearest = show(job, document, request, own, *res.bound_by->nearest);
    if (res.baseline) {
        r.baseline = show(job, document, request, own, *res.baseline);
        for (size_t i = 0; i < r.top.size(); ++i)
            if (r.top[i].candidate.layout == res.baseline->layout) r.baseline_rank = int(i + 1);
    }
    r.systems = request.systems.size();
    r.node_counts = request.nodes.empty() ? 1 : request.nodes.size();
    r.threads = request.threads;
    return r;
}

OJson search_json(const SearchReport& r) {
    const SearchResult& res = r.result;
    OJson j;
    j["job"] = r.job_file;
    j["objective"] = to_string(r.objective);
    j["evaluated"] = res.evaluated;
    j["feasible"] = res.feasible;
    j["timed"] = res.timed;
    j["meshes"] = res.meshes;
    // Keys (dotted, in each configuration) of the front's axes: whole-job figures with data.tokens, else per step.
    const bool job_length = res.time_per_job;
    if (job_length) j["front_axes"] = {"time_to_train_seconds", res.cost_known ? "cost" : "gpu_hours", "energy_kwh"};
    else j["front_axes"] = {"step.seconds", res.cost_known ? "ranked.cost" : "gpu_hours", "ranked.energy_kwh"};
    j["best"] = r.top.empty() ? OJson(nullptr) : config_json(r.top.front(), 1);
    OJson top = OJson::array();
    for (size_t i = 0; i < r.top.size(); ++i) top.push_back(config_json(r.top[i], int(i + 1)));
    j["top"] = top;
    OJson front = OJson::array();
    for (const ShownConfig& s : r.front) front.push_back(config_json(s, std::nullopt));
    j["front"] = front;
    if (res.bound_by) {
        j["bound_by"] = {{"constraint", res.bound_by->constraint}, {"reason", res.bound_by->reason},
                         {"nearest", r.nearest ? config_json(*r.nearest, std::nullopt) : OJson(nullptr)}};
    } else {
        j["bound_by"] = nullptr;
    }
    if (r.baseline) {
        OJson b = config_json(*r.baseline, std::nullopt);
        b["fits"] = r.baseline->candidate.metrics.fits;
        b["rank"] = r.baseline_rank ? OJson(*r.baseline_rank) : OJson(nullptr);
        j["as_written"] = b;
    } else {
        j["as_written"] = nullptr;
    }
    j["search_seconds"] = r.seconds;
    j["threads"] = r.threads;
    return j;
}

std::string search_text(const SearchReport& r) {
    const SearchResult& res = r.result;
    std::string out = fmt::format("ftbound search: {} (objective: {})\n", r.job_file, to_string(r.objective));
    out += fmt::format("  searched {} server{} x {} node count{}: {} meshes, {} configurations planned, {} fit, {} feasible "
                       "({:.2f} s, {} thread{})\n",
                       r.systems, r.systems == 1 ? "" : "s", r.node_counts, r.node_counts == 1 ? "" : "s",
                       fmt_count(double(res.meshes)), fmt_count(double(res.evaluated)), fmt_count(double(res.timed)),
                       fmt_count(double(res.feasible)), r.seconds, r.threads, r.threads == 1 ? "" : "s");
    const bool job_length = !r.top.empty() ? r.top.front().plan.time.time_to_train_seconds.has_value()
                                           : r.baseline && r.baseline->plan.time.time_to_train_seconds.has_value();
    if (!job_length) out += "  no data.tokens: time, cost and energy are per optimizer step\n";
    if (res.bound_by) {
        out += fmt::format("\n  nothing feasible: bound by {}: {}\n", res.bound_by->constraint, res.bound_by->reason);
        if (r.nearest) {
            TextTable t = config_table("nearest");
            add_row(t, "-", *r.nearest, job_length);
            out += '\n';
            out += t.str("  ");
        }
    } else {
        TextTable t = config_table("#");
        for (size_t i = 0; i < r.top.size(); ++i) add_row(t, std::to_string(i + 1), r.top[i], job_length);
        out += '\n';
        out += t.str("  ");
        out += "\n  why each wins over the next:\n";
        for (size_t i = 0; i < r.top.size(); ++i)
            if (!r.top[i].why.empty()) out += fmt::format("    {}. {}\n", i + 1, r.top[i].why);
        out += "  best: " + set_line(r, r.top.front()) + "\n";
    }
    if (r.baseline) {
        const ShownConfig& b = *r.baseline;
        if (!b.candidate.metrics.fits)
            out += "\n  the job as written: " + memory_verdict(b.job, b.plan.memory) + "\n";
        else if (!r.top.empty())
            out += fmt::format("\n  the job as written ({}): step {}, {}; the best is {:.3g}x {}\n",
                               r.baseline_rank ? fmt::format("#{}", *r.baseline_rank) : "not in the top " + std::to_string(r.top_k),
                               fmt_seconds(b.candidate.metrics.step_seconds), layout_summary(b.candidate.layout),
                               objective_value(b.candidate.metrics, r.objective) /
                                   objective_value(r.top.front().candidate.metrics, r.objective),
                               r.objective == Objective::time ? "faster" : r.objective == Objective::cost ? "cheaper" : "more frugal");
    }
    if (!r.front.empty()) {
        out += fmt::format("\n  Pareto front (time vs {} vs energy): {} configuration{}\n", res.cost_known ? "cost" : "GPU-hours",
                           r.front.size(), r.front.size() == 1 ? "" : "s");
        TextTable t = config_table("front");
        for (size_t i = 0; i < r.front.size(); ++i) add_row(t, std::to_string(i + 1), r.front[i], job_length);
        out += t.str("  ");
    }
    return out;
}

std::string search_csv(const SearchReport& r) {
    auto quote = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos) return s;
        std::string q = "\"";
        for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
        return q + "\"";
    };
    std::string out =
        "list,rank,system,nodes,gpus,tp,pp,cp,dp,ep,sequence_parallel,zero,pp_schedule,virtual_stages,micro_batch,"
        "activation_checkpointing,offload_optimizer,offload_params,offload_activations,loss,compile,precision,method,"
        "optimizer,fits,device_used_bytes,step_seconds,tokens_per_second,time_to_train_seconds,gpu_hours,cost,energy_kwh,"
        "bottleneck,why\n";
    auto row = [&](const std::string& list, const std::string& rank, const ShownConfig& s) {
        const Layout& l = s.candidate.layout;
        const Metrics& m = s.candidate.metrics;
        const bool len = s.plan.time.time_to_train_seconds.has_value();
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.0f},{:.6g},{:.6g},{},{},{},{},{},{}\n",
                           list, rank, quote(s.system), l.nodes, m.gpus, l.tp, l.pp, l.cp, l.dp, l.ep, l.sequence_parallel,
                           l.zero, to_string(l.schedule), l.virtual_stages, l.micro_batch, to_string(l.recompute),
                           to_string(l.offload_optimizer), to_string(l.offload_params), to_string(l.offload_activations),
                           to_string(l.loss), l.compile, to_string(l.precision), to_string(l.method), to_string(l.optimizer),
                           m.fits, m.device_used_bytes, m.step_seconds, m.tokens_per_second,
                           len ? fmt::format("{:.6g}", m.time_seconds) : "", len ? fmt::format("{:.6g}", m.gpu_hours) : "",
                           m.cost && len ? fmt::format("{:.6g}", *m.cost) : "", len ? fmt::format("{:.6g}", m.energy_kwh) : "",
                           m.fits ? to_string(s.plan.time.bottleneck) : "", quote(s.why));
    };
    for (size_t i = 0; i < r.top.size(); ++i) row("top", std::to_string(i + 1), r.top[i]);
    for (size_t i = 0; i < r.front.size(); ++i) row("front", std::to_string(i + 1), r.front[i]);
    if (r.nearest) row("nearest", "", *r.nearest);
    if (r.baseline) row("as_written", r.baseline_rank ? std::to_string(*r.baseline_rank) : "", *r.baseline);
    return out;
}

}  // namespace ftb
