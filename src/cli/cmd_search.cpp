// `ftbound search JOB.yaml [--hardware A,B,...|--all-systems] [--nodes N|A-B] [--objective time|cost|energy]
//   [--top K] [--deadline HOURS] [--budget AMOUNT] [--max-gpus N] [--allow fp8,lora,qlora,adamw_8bit]
//   [--allow-tight] [--threads N] [--json|--csv] [--html FILE] [--set KEY=VALUE]...`
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "report/search_report.hpp"
#include "search/search.hpp"
#include "spec/catalog.hpp"
#include "spec/framework_support.hpp"
#include "spec/job_file.hpp"
#include "web/html_page.hpp"

namespace ftb::cli {
namespace {

struct SearchArgs {
    std::string job;
    std::string hardware;
    bool all_systems = false;
    std::string nodes;
    std::string objective = "time";
    std::string top = "5";
    std::string deadline_hours;
    std::string budget;
    std::string max_gpus;
    std::string allow;
    bool allow_tight = false;
    std::string threads;
    bool json = false;
    bool csv = false;
    std::string html;
    std::vector<std::string> sets;
};

[[noreturn]] void bad_flag(const std::string& flag, const std::string& reason) {
    throw InputError("command line", flag, reason);
}

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

// A whole number in [lo, hi] written in full (no sign, no fraction, no trailing text).
int64_t whole_number(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12)
        bad_flag(flag, "'" + text + "' is not a whole number");
    const int64_t v = std::stoll(text);
    if (v < lo || v > hi) bad_flag(flag, fmt::format("{} is outside {}..{}", v, lo, hi));
    return v;
}

double positive_number(const std::string& flag, const std::string& text) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        bad_flag(flag, "'" + text + "' is not a number");
    }
    if (used != text.size() || !(v > 0) || !std::isfinite(v)) bad_flag(flag, "'" + text + "' is not a positive number");
    return v;
}

// N, A-B (every node count in between) or a list of those: "1-8", "16,32,64".
std::vector<int> node_counts(const std::string& text) {
    constexpr int64_t kMaxNodes = 100000;
    std::vector<int> out;
    const auto parts = split_list(text);
    if (parts.empty()) bad_flag("--nodes", "give N, A-B or a comma-separated list");
    for (const std::string& p : parts) {
        const size_t dash = p.find('-');
        if (dash == std::string::npos) {
            out.push_back(int(whole_number("--nodes", p, 1, kMaxNodes)));
            continue;
        }
        const int64_t a = whole_number("--nodes", p.substr(0, dash), 1, kMaxNodes);
        const int64_t b = whole_number("--nodes", p.substr(dash + 1), 1, kMaxNodes);
        if (b < a) bad_flag("--nodes", "'" + p + "': the range ends before it starts");
        for (int64_t n = a; n <= b; ++n) out.push_back(int(n));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

AllowedChanges allowed_changes(const std::string& text) {
    AllowedChanges a;
    for (const std::string& w : split_list(text)) {
        if (w == "fp8") a.fp8 = true;
        else if (w == "lora") a.lora = true;
        else if (w == "qlora") a.qlora = true;
        else if (w == "adamw_8bit") a.adamw_8bit = true;
        else bad_flag("--allow", "'" + w + "' is not one of fp8, lora, qlora, adamw_8bit");
    }
    return a;
}

// The servers to search, resolved from the catalog now: the search itself reads no files.
std::vector<SearchSystem> search_systems(const SearchArgs& a, const Job& job, const Json& doc) {
    if (!a.hardware.empty() && a.all_systems) bad_flag("--all-systems", "give either --hardware or --all-systems");
    if (a.hardware.empty() && !a.all_systems) return {{job.system.name, job.system, true}};
    const Catalog& cat = Catalog::instance();
    const std::vector<std::string> names = a.all_systems ? cat.names("systems") : split_list(a.hardware);
    if (names.empty()) bad_flag("--hardware", "name at least one system");
    // A fabric the job names applies to every server; otherwise each server brings its own.
    const Json* hw = doc.contains("hardware") ? &doc["hardware"] : nullptr;
    const bool own_fabric = hw && hw->is_object() && hw->contains("inter_node");
    std::vector<SearchSystem> out;
    for (const std::string& n : names) {
        SearchSystem s{n, cat.system(n, {"--hardware", n}), false};
        if (own_fabric) s.spec.inter_node = job.system.inter_node;
        s.is_job_system = n == job.system.name && s.spec.device.name == job.system.device.name;
        out.push_back(std::move(s));
    }
    return out;
}

SearchRequest make_request(const SearchArgs& a, const Job& job, const Json& doc) {
    SearchRequest r;
    r.systems = search_systems(a, job, doc);
    if (!a.nodes.empty()) r.nodes = node_counts(a.nodes);
    if (!a.max_gpus.empty()) r.max_gpus = whole_number("--max-gpus", a.max_gpus, 1, int64_t(1) << 30);
    if (a.objective == "time") r.objective = Objective::time;
    else if (a.objective == "cost") r.objective = Objective::cost;
    else if (a.objective == "energy") r.objective = Objective::energy;
    else bad_flag("--objective", "'" + a.objective + "' is not one of time, cost, energy");
    r.top = size_t(whole_number("--top", a.top, 1, 1000));
    const bool priced = job.spec.ops.price_per_gpu_hour || job.spec.ops.price_per_node_hour;
    const bool length = job.spec.data.tokens > 0;
    if (r.objective == Objective::cost && !priced)
        bad_flag("--objective", "cost needs a price: ops.price_per_gpu_hour (or ops.price_per_node_hour) in the job");
    if (!a.deadline_hours.empty()) {
        if (!length) bad_flag("--deadline", "needs the job's length: data.tokens (and data.epochs) in the job");
        r.deadline_seconds = positive_number("--deadline", a.deadline_hours) * 3600.0;
    }
    if (!a.budget.empty()) {
        if (!length) bad_flag("--budget", "needs the job's length: data.tokens (and data.epochs) in the job");
        if (!priced) bad_flag("--budget", "needs a price: ops.price_per_gpu_hour (or ops.price_per_node_hour) in the job");
        r.budget = positive_number("--budget", a.budget);
    }
    r.allow = allowed_changes(a.allow);
    r.allow_tight = a.allow_tight;
    r.support = load_framework_support(job.spec.train.framework);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    r.threads = a.threads.empty() ? cores : unsigned(whole_number("--threads", a.threads, 1, 1024));
    return r;
}

// "search: 1,234 of 5,678 meshes (21%)" on stderr, only on a terminal and only once the search has run a second.
std::function<void(size_t, size_t)> terminal_progress() {
    if (!isatty(STDERR_FILENO)) return {};
    const auto start = std::chrono::steady_clock::now();
    return [start](size_t done, size_t total) {
        if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
        std::fprintf(stderr, "\rsearch: %zu of %zu meshes (%.0f%%)%s", done, total, total ? 100.0 * double(done) / double(total) : 100.0,
                     done >= total ? "\r\033[K" : "");
        std::fflush(stderr);
    };
}

const Register reg{Command{
    "search", "the fastest, cheapest or least-energy layout (and hardware) for a fine-tuning job; the Pareto front of time vs cost",
    [](CLI::App& sub) -> std::function<int()> {
        auto a = std::make_shared<SearchArgs>();
        sub.add_option("job", a->job, "job file (YAML or JSON)")->required();
        sub.add_option("--hardware", a->hardware, "comma-separated catalog systems to search (default: the job's own)");
        sub.add_flag("--all-systems", a->all_systems, "search every server in the catalog");
        sub.add_option("--nodes", a->nodes, "node counts: N, A-B, or a list (default: the job's)");
        sub.add_option("--objective", a->objective, "rank by time (default), cost or energy");
        sub.add_option("--top", a->top, "how many configurations to show (default 5)");
        sub.add_option("--deadline", a->deadline_hours, "hours the whole job may take at most (needs data.tokens)");
        sub.add_option("--budget", a->budget, "the most the whole job may cost (needs data.tokens and a price)");
        sub.add_option("--max-gpus", a->max_gpus, "use at most this many GPUs");
        sub.add_option("--allow", a->allow, "changes that alter the training: fp8,lora,qlora,adamw_8bit");
        sub.add_flag("--allow-tight", a->allow_tight, "accept configurations whose memory is within the model's uncertainty");
        sub.add_option("--threads", a->threads, "worker threads (default: all cores); the answer does not depend on it");
        sub.add_flag("--json", a->json, "print one JSON document");
        sub.add_flag("--csv", a->csv, "print CSV rows (top, front, nearest, as written)");
        sub.add_option("--html", a->html, "also write the search as a self-contained HTML page with charts");
        sub.add_option("--set", a->sets, "override a job-file field: --set train.seq_len=8192")->take_all();
        return [a] {
            if (a->json && a->csv) bad_flag("--csv", "give either --json or --csv");
            Json doc = load_document(a->job);
            if (!doc.is_object()) throw InputError(a->job, "", "the job file must be a mapping (model, train, hardware, ...)");
            for (const auto& s : a->sets) apply_override(doc, s, a->job);
            const Job job = job_from_document(doc, a->job);
            SearchRequest req = make_request(*a, job, doc);
            req.progress = terminal_progress();
            const auto start = std::chrono::steady_clock::now();
            SearchResult result = run_search(job, req);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            SearchReport report = build_search_report(job, doc, req, std::move(result));
            report.seconds = seconds;
            const std::string json_text = search_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            if (!a->html.empty()) web::write_report(a->html, web::ReportKind::search, json_text, "ftbound search: " + a->job);
            std::string out;
            if (a->json) out = json_text;
            else if (a->csv) out = search_csv(report);
            else out = search_text(report);
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
