#include "search/search_space.hpp"

#include <algorithm>

namespace ftb {
namespace {

template <typename T>
void add_unique(std::vector<T>& v, const T& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

template <typename T>
bool has(const std::vector<T>& v, const T& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<int64_t> powers_of_two_upto(int64_t n) {
    std::vector<int64_t> v;
    for (int64_t p = 1; p <= n; p *= 2) v.push_back(p);
    return v;
}

int rank_of(Recompute r) { return r == Recompute::none ? 0 : r == Recompute::selective ? 1 : 2; }

}  // namespace

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> low, high;
    for (int64_t d = 1; d * d <= n; ++d)
        if (n % d == 0) {
            low.push_back(d);
            if (d != n / d) high.push_back(n / d);
        }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

SearchSpace::SearchSpace(const Job& job, const SearchRequest& request)
    : job_layout_(canonical(layout_of(job, 0))), request_(request) {
    const FrameworkSupport& sup = request.support;
    const JobSpec& js = job.spec;
    layers_ = int64_t(job.model.num_layers());
    seq_len_ = js.train.seq_len;
    global_batch_ = js.train.global_batch;
    for (const auto& l : job.model.layers) experts_ = std::max(experts_, l.experts);

    // Memory savers, lightest first: recompute none < selective < full.
    recompute_ = sup.activation_checkpointing;
    add_unique(recompute_, js.train.recompute);
    std::sort(recompute_.begin(), recompute_.end(), [](Recompute a, Recompute b) { return rank_of(a) < rank_of(b); });
    // Offload: the job's own setting is tried beside the standard levels when it is not one of them.
    own_offload_ = {js.offload.optimizer, js.offload.params, js.offload.activations};

    // GPipe keeps every micro-batch in flight for the same bubble as 1F1B: only the job's own use of it is tried.
    for (PipelineSchedule s : sup.pipeline)
        if (s != PipelineSchedule::gpipe) add_unique(schedules_, s);
    zero_ = sup.zero;
    add_unique(zero_, js.parallel.zero);
    if (sup.sequence_parallel) sequence_parallel_.push_back(true);
    add_unique(sequence_parallel_, bool(js.parallel.sequence_parallel));
    losses_ = {js.train.loss};
    if (has(sup.losses, LossImpl::fused)) add_unique(losses_, LossImpl::fused);
    else if (has(sup.losses, LossImpl::chunked)) add_unique(losses_, LossImpl::chunked);
    compile_ = {js.train.compile};
    if (sup.compile) add_unique(compile_, true);
    precisions_ = {js.train.precision};
    if (request.allow.fp8 && sup.fp8) add_unique(precisions_, Precision::fp8);
    methods_ = {js.train.method};
    if (request.allow.lora && sup.lora && js.train.method == Method::full) add_unique(methods_, Method::lora);
    if (request.allow.qlora && sup.qlora && (js.train.method == Method::full || js.train.method == Method::lora))
        add_unique(methods_, Method::qlora);
    optimizers_ = {js.train.optimizer};
    if (request.allow.adamw_8bit && (js.train.optimizer == Optimizer::adamw || js.train.optimizer == Optimizer::adam))
        add_unique(optimizers_, Optimizer::adamw_8bit);

    for (int s = 0; s < int(request.systems.size()); ++s) {
        std::vector<int> nodes = request.nodes;
        if (nodes.empty()) nodes = {job.system.nodes};
        for (int n : nodes) add_meshes(s, n);
    }
}

std::vector<int64_t> SearchSpace::tp_options(const SearchSystem& s) const {
    std::vector<int64_t> v = {1};
    // Tensor parallelism stays inside a server's GPU fabric: its degree divides the GPUs of a node.
    if (request_.support.tensor_parallel && !s.spec.cpu_only)
        for (int64_t d : divisors(s.spec.devices_per_node)) add_unique(v, d);
    add_unique(v, job_layout_.tp);
    return v;
}

std::vector<int64_t> SearchSpace::pp_options() const {
    std::vector<int64_t> v = {1};
    if (!request_.support.pipeline.empty()) {
        // Even splits (pp divides the layers) and the usual powers of two (the first stages take one more layer).
        for (int64_t d : divisors(layers_)) add_unique(v, d);
        for (int64_t p : powers_of_two_upto(layers_)) add_unique(v, p);
    }
    add_unique(v, job_layout_.pp);
    return v;
}

std::vector<int64_t> SearchSpace::cp_options() const {
    std::vector<int64_t> v = {1};
    // Ring attention with causal load balancing splits each sequence into 2*cp chunks (Megatron-Core
    // get_batch_on_this_cp_rank): powers of two with seq_len divisible by 2*cp.
    if (request_.support.context_parallel)
        for (int64_t c = 2; 2 * c <= seq_len_; c *= 2)
            if (seq_len_ % (2 * c) == 0) v.push_back(c);
    add_unique(v, job_layout_.cp);
    return v;
}

std::vector<int64_t> SearchSpace::ep_options() const {
    std::vector<int64_t> v = {1};
    if (request_.support.expert_parallel && experts_ > 0)
        for (int64_t d : divisors(experts_)) add_unique(v, d);
    add_unique(v, job_layout_.ep);
    return v;
}

void SearchSpace::add_meshes(int system, int nodes) {
    const SearchSystem& sys = request_.systems[size_t(system)];
    const int64_t gpus = int64_t(sys.spec.devices_per_node) * nodes;
    if (gpus <= 0) return;
    // Several nodes need a fabric between them (a composed node without hardware.inter_node has none).
    if (nodes > 1 && !(sys.spec.inter_node.bandwidth_GBps > 0)) return;
    const bool cpu = sys.spec.cpu_only;
    const std::vector<int64_t> tps = cpu ? std::vector<int64_t>{1} : tp_options(sys);
    const std::vector<int64_t> pps = cpu ? std::vector<int64_t>{1} : pp_options();
    const std::vector<int64_t> cps = cpu ? std::vector<int64_t>{1} : cp_options();
    const std::vector<int64_t> eps = ep_options();
    for (int64_t tp : tps)
        for (int64_t cp : cps)
            for (int64_t pp : pps) {
                const int64_t model_parallel = tp * cp * pp;
                if (model_parallel > gpus || gpus % model_parallel != 0) continue;
                const int64_t dp = gpus / model_parallel;
                if (global_batch_ % dp != 0) continue;   // the global batch is kept: dp ranks must split it
                for (int64_t ep : eps) {
                    if ((dp * cp) % ep != 0) continue;
                    if (request_.max_gpus > 0 && gpus > request_.max_gpus) {
                        ++over_gpu_limit_;
                        continue;
                    }
                    meshes_.push_back({system, nodes, tp, pp, cp, dp, ep});
                }
            }
}

std::vector<Layout> SearchSpace::variants(const Mesh& m) const {
    std::vector<Layout> out;
    Layout base;
    base.micro_batch = 0;   // chosen by the walk
    base.system = m.system, base.nodes = m.nodes;
    base.tp = m.tp, base.pp = m.pp, base.cp = m.cp, base.dp = m.dp, base.ep = m.ep;
    // Pipeline schedules of this depth: 1F1B, interleaved with v virtual stages where the layers split evenly
    // into pp*v chunks (Megatron's num_layers_per_virtual_pipeline_stage), and the job's own.
    std::vector<std::pair<PipelineSchedule, int64_t>> schedules = {{PipelineSchedule::one_f_one_b, 1}};
    if (m.pp > 1) {
        if (has(schedules_, PipelineSchedule::interleaved) && layers_ % m.pp == 0)
            for (int64_t v : divisors(layers_ / m.pp))
                if (v > 1) schedules.emplace_back(PipelineSchedule::interleaved, v);
        if (job_layout_.pp == m.pp) add_unique(schedules, std::pair{job_layout_.schedule, job_layout_.virtual_stages});
    }
    std::vector<int> zeros = m.dp > 1 ? zero_ : std::vector<int>{0};
    if (m.dp == 1) add_unique(zeros, job_layout_.zero);   // ZeRO shards over data-parallel ranks: one rank, nothing to shard
    const std::vector<bool> sps = m.tp > 1 ? sequence_parallel_ : std::vector<bool>{false};
    for (Method method : methods_)
        for (Precision precision : precisions_)
            for (Optimizer optimizer : optimizers_)
                for (bool sp : sps)
                    for (int zero : zeros)
                        for (const auto& [schedule, v] : schedules)
                            for (LossImpl loss : losses_)
                                for (bool compile : compile_) {
                                    Layout l = base;
                                    l.method = method, l.precision = precision, l.optimizer = optimizer;
                                    l.sequence_parallel = sp, l.zero = zero;
                                    l.schedule = schedule, l.virtual_stages = v;
                                    l.loss = loss, l.compile = compile;
                                    out.push_back(canonical(l));
                                }
    return out;
}

OffloadChoices SearchSpace::offload_choices(const Layout& variant) const {
    // Offload is a way to fit, not to speed up: besides no offload and the job's own setting, the framework's
    // offloads are tried only where neither fits. Each level moves one more kind of state to host RAM: the
    // optimizer (ZeRO-Offload), then the parameters (only through ZeRO-3), then the activations.
    const FrameworkSupport& sup = request_.support;
    const bool zero3 = variant.zero == 3;
    const bool own_valid = own_offload_.params == OffloadTarget::none || zero3;
    OffloadChoices c;
    c.always = {{}};
    if (own_valid) add_unique(c.always, own_offload_);
    OffloadLevel level;
    auto add = [&] {
        if (!has(c.always, level)) c.when_needed.push_back(level);
    };
    if (sup.offload_optimizer) level.optimizer = OffloadTarget::cpu, add();
    if (sup.offload_optimizer && sup.offload_params && zero3) level.params = OffloadTarget::cpu, add();
    if (sup.offload_activations) level.activations = OffloadTarget::cpu, add();
    // GPU memory falls from level to level, so the last holds the least of them; paged optimizer states are in
    // unified memory, not in the device figure, so moving them to the host frees nothing there and the
    // gradient staging buffer it adds can make a later level larger: then every setting is a candidate.
    if (variant.optimizer == Optimizer::paged_adamw_8bit) {
        c.least_memory = c.always;
        c.least_memory.insert(c.least_memory.end(), c.when_needed.begin(), c.when_needed.end());
    } else {
        c.least_memory = {level};
        if (own_valid && own_offload_ != OffloadLevel{}) add_unique(c.least_memory, own_offload_);   // not a standard level
    }
    return c;
}

bool SearchSpace::lacks_free_improvement(const Layout& l) const {
    const FrameworkSupport& sup = request_.support;
    if (sup.compile && !l.compile) return true;
    if (has(losses_, LossImpl::fused) && l.loss != LossImpl::fused) return true;
    if (sup.sequence_parallel && l.tp > 1 && !l.sequence_parallel) return true;
    return false;
}

std::vector<int64_t> SearchSpace::micro_batches(const Mesh& m) const { return divisors(global_batch_ / m.dp); }

bool SearchSpace::contains(const Layout& target) const {
    const Layout l = canonical(target);
    bool mesh = false;
    for (const Mesh& m : meshes_)
        mesh |= m.system == l.system && m.nodes == l.nodes && m.tp == l.tp && m.pp == l.pp && m.cp == l.cp &&
                m.dp == l.dp && m.ep == l.ep;
    if (!mesh) return false;
    const Mesh m{l.system, l.nodes, l.tp, l.pp, l.cp, l.dp, l.ep};
    Layout probe = l;
    probe.micro_batch = 0, probe.recompute = Recompute::none;
    probe.offload_optimizer = probe.offload_params = probe.offload_activations = OffloadTarget::none;
    bool variant = false;
    for (const Layout& v : variants(m)) variant |= v == probe;
    const bool micro = has(micro_batches(m), l.micro_batch);
    const bool rc = has(recompute_, l.recompute);
    const OffloadChoices choices = offload_choices(l);
    const OffloadLevel own{l.offload_optimizer, l.offload_params, l.offload_activations};
    const bool off = has(choices.always, own) || has(choices.when_needed, own);
    return variant && micro && rc && off;
}

}  // namespace ftb
