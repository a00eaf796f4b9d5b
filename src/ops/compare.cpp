#include "ops/compare.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

// A layout to try on one system: tensor and pipeline parallel sizes, ZeRO stage, devices used per node.
struct Layout {
    int64_t tp = 1, pp = 1;
    int zero = 0;
    int used_per_node = 1;
};

struct Candidate {
    Layout layout;
    int64_t micro_batch = 1;
    Json doc;
    std::optional<Job> job;
    std::optional<Plan> plan;   // memory and time only, for choosing
    std::string error;
};

int64_t get_int(const Json& obj, const char* key, int64_t dflt) {
    if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number_integer()) return dflt;
    return obj[key].get<int64_t>();
}

// The largest micro-batch <= `mb` with micro_batch x dp dividing the global batch (0 when none).
int64_t micro_batch_for(int64_t global, int64_t mb, int64_t dp) {
    for (int64_t m = std::max<int64_t>(1, mb); m >= 1; --m)
        if (global % (m * dp) == 0) return m;
    return 0;
}

// Layouts worth trying: the job's own first, then tensor parallel inside the node, ZeRO-3, and fewer devices per
// node when the global batch cannot be split over all of them: every count whose data-parallel size (over the
// job's context-parallel groups) divides the global batch, largest first. Not only halvings: 16 of an NVL72
// rack's 72 GPUs split a batch of 16, which no power-of-two share of 72 does.
std::vector<Layout> layouts_to_try(const Layout& own, const SystemSpec& sys, int64_t global_batch, int64_t cp) {
    std::vector<Layout> out{own};
    auto add = [&](const Layout& l) {
        for (const auto& o : out)
            if (o.tp == l.tp && o.pp == l.pp && o.zero == l.zero && o.used_per_node == l.used_per_node) return;
        out.push_back(l);
    };
    const int per_node = sys.devices_per_node;
    if (!sys.cpu_only)
        for (int64_t tp = 1; tp <= per_node; tp *= 2)
            if (per_node % tp == 0) {
                add({tp, own.pp, own.zero, per_node});
                add({tp, 1, own.zero, per_node});
                add({tp, 1, 3, per_node});
            }
    add({own.tp, own.pp, 3, per_node});
    for (int used = per_node - 1; used >= 1; --used) {
        const int64_t devices = int64_t(used) * sys.nodes;
        if (devices % cp != 0 || global_batch % (devices / cp) != 0) continue;
        add({1, 1, own.zero, used});
        add({1, 1, 3, used});
    }
    return out;
}

Candidate make_candidate(const Json& base, const std::string& file, const Layout& l, const SystemSpec& sys) {
    Candidate c;
    c.layout = l;
    c.doc = base;
    Json& par = c.doc["parallel"];
    par["tp"] = l.tp;
    par["pp"] = l.pp;
    par["zero"] = l.zero;
    par["dp"] = "auto";
    if (l.used_per_node < sys.devices_per_node) c.doc["hardware"]["gpus_per_node"] = l.used_per_node;
    Json& train = c.doc["train"];
    const int64_t cp = get_int(par, "cp", 1);
    const int64_t devices = int64_t(l.used_per_node) * sys.nodes;
    if (devices % (l.tp * l.pp * cp) != 0) {
        c.error = fmt::format("tp*pp*cp = {} does not divide the {} devices", l.tp * l.pp * cp, devices);
        return c;
    }
    const int64_t dp = devices / (l.tp * l.pp * cp);
    if (l.zero == 3 && dp == 1 && get_int(base["parallel"], "zero", 0) != 3) {
        c.error = "ZeRO-3 shards over data-parallel ranks: there is one";
        return c;
    }
    const int64_t global = get_int(train, "global_batch", 1);
    c.micro_batch = micro_batch_for(global, get_int(train, "micro_batch", 1), dp);
    if (c.micro_batch == 0) {
        c.error = fmt::format("the global batch of {} cannot be split over {} data-parallel ranks", global, dp);
        return c;
    }
    train["micro_batch"] = c.micro_batch;
    try {
        c.job = job_from_document(c.doc, file);
        c.plan = make_plan(*c.job, PlanOptions{false, false, false, false});
    } catch (const InputError& e) {
        // Only what this layout makes impossible is a candidate's failure; mistakes in the job are the user's.
        const std::string& f = e.field();
        if (f.rfind("parallel", 0) != 0 && f.rfind("hardware", 0) != 0 && f != "train.global_batch" &&
            f != "train.precision")
            throw;
        c.job.reset();
        c.error = e.what();
    }
    return c;
}

bool fits(const Candidate& c) { return c.plan && c.plan->memory.fits && c.plan->memory.host_fits; }

int changes(const Layout& l, const Layout& own) {
    return (l.tp != own.tp) + (l.pp != own.pp) + (l.zero != own.zero) + (l.used_per_node != own.used_per_node);
}

// The job's own layout when it runs and fits here; else the fastest layout that fits (within 1% of the fastest,
// the one closest to the job's); else the job's own (or the first that runs), shown as not fitting.
const Candidate* choose(const std::vector<Candidate>& cands) {
    if (cands.empty()) return nullptr;
    if (fits(cands.front())) return &cands.front();
    const Layout& own = cands.front().layout;
    double fastest = 0;
    for (const auto& c : cands)
        if (fits(c) && (fastest == 0 || c.plan->time.step_seconds < fastest)) fastest = c.plan->time.step_seconds;
    const Candidate* best = nullptr;
    for (const auto& c : cands)
        if (fits(c) && c.plan->time.step_seconds <= fastest * 1.01 &&
            (!best || changes(c.layout, own) < changes(best->layout, own)))
            best = &c;
    if (best) return best;
    for (const auto& c : cands)
        if (c.plan) return &c;
    return nullptr;
}

// What differs from the job as written, each with its reason.
std::vector<std::string> describe_adaptation(const Candidate& chosen, const Candidate& own, const Json& job_doc,
                                             const SystemSpec& sys) {
    std::vector<std::string> out;
    const char* unit = sys.cpu_only ? "sockets" : "GPUs";
    const Json& par0 = job_doc.contains("parallel") ? job_doc["parallel"] : Json::object();
    const Layout& l = chosen.layout;
    const std::string why = own.plan ? "the job's own layout does not fit here" : own.error;
    if (l.used_per_node < sys.devices_per_node)
        out.push_back(fmt::format("uses {} of {} {} per node ({}); the others idle", l.used_per_node,
                                  sys.devices_per_node, unit, why));
    if (sys.cpu_only && (get_int(par0, "tp", 1) > 1 || get_int(par0, "pp", 1) > 1 || get_int(par0, "cp", 1) > 1 ||
                         get_int(par0, "ep", 1) > 1))
        out.push_back("tp=pp=cp=ep=1: a CPU server runs data parallel over its sockets");
    else {
        if (l.tp != get_int(par0, "tp", 1))
            out.push_back(fmt::format("tp={} (the job has {}): {}", l.tp, get_int(par0, "tp", 1), why));
        if (l.pp != get_int(par0, "pp", 1))
            out.push_back(fmt::format("pp={} (the job has {}): {}", l.pp, get_int(par0, "pp", 1), why));
    }
    if (l.zero != get_int(par0, "zero", 0))
        out.push_back(fmt::format("zero={} (the job has {}): {}", l.zero, get_int(par0, "zero", 0), why));
    const Job& job = *chosen.job;
    const int64_t dp0 = get_int(par0, "dp", 0);
    if (dp0 > 0 && dp0 != job.spec.parallel.dp)
        out.push_back(fmt::format("dp={} (the job has {}): data parallel over the {} {} used", job.spec.parallel.dp, dp0,
                                  job.system.total_devices(), unit));
    const int64_t mb0 = get_int(job_doc.contains("train") ? job_doc["train"] : Json::object(), "micro_batch", 1);
    if (chosen.micro_batch != mb0)
        out.push_back(fmt::format("micro_batch={} (the job has {}): micro_batch x dp ({}) must divide the global batch "
                                  "of {}",
                                  chosen.micro_batch, mb0, job.spec.parallel.dp, job.spec.train.global_batch));
    return out;
}

// The job document moved to `system` on `nodes` nodes, priced for it; notes what changed on the way.
Json document_for(const Json& job_doc, const std::string& system, const SystemSpec& sys, int nodes,
                  const CompareOptions& opt, std::vector<std::string>& notes) {
    Json d = job_doc;
    Json& hw = d["hardware"];
    if (!hw.is_object()) hw = Json::object();
    const std::string own_system = hw.value("system", std::string());
    const bool own = own_system == system || own_system == sys.name;
    for (const char* k : {"gpu", "gpus_per_node", "intra_node", "host"}) hw.erase(k);
    hw["system"] = system;
    const int job_nodes = int(get_int(hw, "nodes", 1));
    if (nodes != job_nodes) notes.push_back(fmt::format("nodes={} (the job has {})", nodes, job_nodes));
    hw["nodes"] = nodes;
    // The fabric between nodes belongs to the system; the job's applies to its own system, or where the system
    // names none.
    if (!own && hw.contains("inter_node") && sys.inter_node.bandwidth_GBps > 0) {
        hw.erase("inter_node");
        if (nodes > 1) notes.push_back("inter_node: the system's " + sys.inter_node.name);
    }
    Json& par = d["parallel"];
    if (!par.is_object()) par = Json::object();
    if (sys.cpu_only) {
        for (const char* k : {"cp", "ep"}) par[k] = 1;
        par["sequence_parallel"] = false;
        if (d.contains("offload") && d["offload"].is_object()) d["offload"].erase("params");
    }
    Json& ops = d["ops"];
    if (!ops.is_object()) ops = Json::object();
    const bool job_priced = ops.contains("price_per_gpu_hour") || ops.contains("price_per_node_hour");
    auto given = opt.price_per_node_hour.find(system);
    if (given != opt.price_per_node_hour.end()) {
        ops.erase("price_per_gpu_hour");
        ops["price_per_node_hour"] = given->second;
        notes.push_back(fmt::format("price: {} per node-hour (--price)", given->second));
    } else if (job_priced && !own) {
        ops.erase("price_per_gpu_hour");
        ops.erase("price_per_node_hour");
        notes.push_back("price: the catalog's for this system (the job's ops price is for " +
                        (own_system.empty() ? std::string("its own hardware") : own_system) + ")");
    }
    return d;
}

CompareRow compare_one(const Json& job_doc, const std::string& file, const std::string& system, int nodes,
                       const CompareOptions& opt) {
    CompareRow row;
    row.system = system;
    row.nodes = nodes;
    SystemSpec sys = Catalog::instance().system(system, {"--hardware", system});
    sys.nodes = nodes;
    const Json base = document_for(job_doc, system, sys, nodes, opt, row.adapted);
    const Json& par = base["parallel"];
    const Layout own{sys.cpu_only ? 1 : get_int(par, "tp", 1), sys.cpu_only ? 1 : get_int(par, "pp", 1),
                     int(get_int(par, "zero", 0)), sys.devices_per_node};
    std::vector<Candidate> cands;
    const int64_t global_batch = get_int(base["train"], "global_batch", 1), cp = std::max<int64_t>(1, get_int(par, "cp", 1));
    for (const Layout& l : layouts_to_try(own, sys, global_batch, cp)) cands.push_back(make_candidate(base, file, l, sys));
    const Candidate* chosen = choose(cands);
    if (!chosen) {
        row.error = cands.front().error;
        return row;
    }
    const auto changes = describe_adaptation(*chosen, cands.front(), job_doc, sys);
    row.adapted.insert(row.adapted.begin(), changes.begin(), changes.end());
    row.job = chosen->job;
    row.plan = make_plan(*row.job, PlanOptions{true, false, true, false});
    row.cost_per_million_tokens = cost_per_million_tokens(*row.job, *row.plan);
    row.energy_kwh_per_million_tokens = energy_kwh_per_million_tokens(*row.job, *row.plan);
    return row;
}

}  // namespace

std::optional<double> cost_per_million_tokens(const Job& job, const Plan& plan) {
    const OperationsResult& o = plan.ops;
    const double tokens = job.spec.data.tokens * job.spec.data.epochs;
    if (o.has_job_length && o.energy.total_cost && tokens > 0) return *o.energy.total_cost / tokens * 1e6;
    if (!o.price || !(plan.time.tokens_per_step > 0)) return std::nullopt;
    const double hours = plan.time.step_seconds / 3600.0;
    const double energy_kwh = o.power.node_w * job.system.nodes * hours / 1000.0 * std::max(1.0, job.spec.ops.pue);
    const double step_cost = o.price->per_node_hour * job.system.nodes * hours +
                             (o.price->includes_power ? 0.0 : energy_kwh * job.spec.ops.electricity_per_kwh);
    return step_cost / plan.time.tokens_per_step * 1e6;
}

double energy_kwh_per_million_tokens(const Job& job, const Plan& plan) {
    const OperationsResult& o = plan.ops;
    const double tokens = job.spec.data.tokens * job.spec.data.epochs;
    if (o.has_job_length && tokens > 0) return o.energy.energy_kwh / tokens * 1e6;
    if (!(plan.time.tokens_per_step > 0)) return 0;
    const double kwh = o.power.node_w * job.system.nodes * plan.time.step_seconds / 3.6e6 * std::max(1.0, job.spec.ops.pue);
    return kwh / plan.time.tokens_per_step * 1e6;
}

std::vector<std::string> split_system_list(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<CompareRow> compare_systems(const Json& doc, const std::string& file, const std::vector<std::string>& systems) {
    CompareOptions opt;
    opt.systems = systems;
    return compare_systems(doc, file, opt);
}

std::vector<CompareRow> compare_systems(const Json& doc, const std::string& file, const CompareOptions& opt) {
    std::vector<CompareRow> rows;
    const int job_nodes = [&] {
        const Json* hw = doc.contains("hardware") ? &doc["hardware"] : nullptr;
        return hw ? int(get_int(*hw, "nodes", 1)) : 1;
    }();
    const std::vector<int> nodes = opt.nodes.empty() ? std::vector<int>{job_nodes} : opt.nodes;
    for (const auto& name : opt.systems)
        for (int n : nodes) rows.push_back(compare_one(doc, file, name, n, opt));
    return rows;
}

}  // namespace ftb
