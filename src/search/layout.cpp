#include "search/layout.hpp"

#include <fmt/format.h>

namespace ftb {

Layout layout_of(const Job& job, int system) {
    const JobSpec& j = job.spec;
    Layout l;
    l.system = system;
    l.nodes = job.system.nodes;
    l.tp = j.parallel.tp, l.pp = j.parallel.pp, l.cp = j.parallel.cp, l.dp = j.parallel.dp, l.ep = j.parallel.ep;
    l.sequence_parallel = j.parallel.sequence_parallel;
    l.zero = j.parallel.zero;
    l.schedule = j.parallel.pp_schedule;
    l.virtual_stages = j.parallel.virtual_stages;
    l.micro_batch = j.train.micro_batch;
    l.recompute = j.train.recompute;
    l.offload_optimizer = j.offload.optimizer;
    l.offload_params = j.offload.params;
    l.offload_activations = j.offload.activations;
    l.loss = j.train.loss;
    l.compile = j.train.compile;
    l.precision = j.train.precision;
    l.method = j.train.method;
    l.optimizer = j.train.optimizer;
    return l;
}

Layout canonical(Layout l) {
    if (l.pp == 1) l.schedule = PipelineSchedule::one_f_one_b;
    if (l.schedule == PipelineSchedule::interleaved && l.virtual_stages <= 1) l.schedule = PipelineSchedule::one_f_one_b;
    if (l.schedule != PipelineSchedule::interleaved) l.virtual_stages = 1;
    return l;
}

void write_layout(const Layout& l, JobSpec& spec) {
    ParallelSpec& p = spec.parallel;
    p.tp = l.tp, p.pp = l.pp, p.cp = l.cp, p.dp = l.dp, p.ep = l.ep;
    p.sequence_parallel = l.sequence_parallel;
    p.zero = l.zero;
    p.pp_schedule = l.schedule;
    p.virtual_stages = l.virtual_stages;
    TrainSpec& t = spec.train;
    t.micro_batch = l.micro_batch;
    t.recompute = l.recompute;
    t.loss = l.loss;
    t.compile = l.compile;
    t.precision = l.precision;
    t.method = l.method;
    t.optimizer = l.optimizer;
    spec.offload.optimizer = l.offload_optimizer;
    spec.offload.params = l.offload_params;
    spec.offload.activations = l.offload_activations;
}

Job apply_layout(const Job& base, const Layout& l, const SystemSpec& system) {
    Job job = base;
    job.system = system;
    job.system.nodes = l.nodes;
    write_layout(l, job.spec);
    return job;
}

std::vector<std::pair<std::string, std::string>> layout_changes(const Layout& from, const Layout& to,
                                                                const std::string& system_name) {
    std::vector<std::pair<std::string, std::string>> c;
    auto num = [&](const char* key, int64_t a, int64_t b) {
        if (a != b) c.emplace_back(key, std::to_string(b));
    };
    auto word = [&](const char* key, const std::string& a, const std::string& b) {
        if (a != b) c.emplace_back(key, b);
    };
    auto flag = [](bool v) { return std::string(v ? "true" : "false"); };
    word("train.method", to_string(from.method), to_string(to.method));
    word("train.precision", to_string(from.precision), to_string(to.precision));
    word("train.optimizer", to_string(from.optimizer), to_string(to.optimizer));
    num("train.micro_batch", from.micro_batch, to.micro_batch);
    word("train.activation_checkpointing", to_string(from.recompute), to_string(to.recompute));
    word("train.loss", to_string(from.loss), to_string(to.loss));
    word("train.compile", flag(from.compile), flag(to.compile));
    num("parallel.tp", from.tp, to.tp);
    num("parallel.pp", from.pp, to.pp);
    num("parallel.cp", from.cp, to.cp);
    num("parallel.ep", from.ep, to.ep);
    num("parallel.dp", from.dp, to.dp);
    word("parallel.sequence_parallel", flag(from.sequence_parallel), flag(to.sequence_parallel));
    num("parallel.zero", from.zero, to.zero);
    word("parallel.pp_schedule", to_string(from.schedule), to_string(to.schedule));
    num("parallel.virtual_stages", from.virtual_stages, to.virtual_stages);
    word("offload.optimizer", to_string(from.offload_optimizer), to_string(to.offload_optimizer));
    word("offload.params", to_string(from.offload_params), to_string(to.offload_params));
    word("offload.activations", to_string(from.offload_activations), to_string(to.offload_activations));
    if (from.system != to.system) c.emplace_back("hardware.system", system_name);
    num("hardware.nodes", from.nodes, to.nodes);
    return c;
}

std::string layout_summary(const Layout& l) {
    std::string s = fmt::format("tp{} pp{}", l.tp, l.pp);
    if (l.pp > 1 && l.schedule == PipelineSchedule::interleaved) s += fmt::format("/v{}", l.virtual_stages);
    if (l.pp > 1 && l.schedule == PipelineSchedule::gpipe) s += "/gpipe";
    s += fmt::format(" cp{} dp{}", l.cp, l.dp);
    if (l.ep > 1) s += fmt::format(" ep{}", l.ep);
    if (l.sequence_parallel) s += " sp";
    s += fmt::format(" z{} mb{}", l.zero, l.micro_batch);
    if (l.recompute != Recompute::none) s += fmt::format(" ac={}", to_string(l.recompute));
    std::string off;
    if (l.offload_optimizer != OffloadTarget::none) off += "opt";
    if (l.offload_params != OffloadTarget::none) off += off.empty() ? "params" : "+params";
    if (l.offload_activations != OffloadTarget::none) off += off.empty() ? "act" : "+act";
    if (!off.empty()) s += " offload=" + off;
    s += fmt::format(" loss={}", to_string(l.loss));
    if (l.compile) s += " compile";
    return s;
}

}  // namespace ftb
