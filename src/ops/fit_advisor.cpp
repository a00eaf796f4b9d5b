// "What would make it fit": candidate changes, each re-planned with the full memory model. The answer is the
// smallest set of changes that fits (one change, else two, else three), and among sets of the same size the least
// disruptive first: numerics and hardware unchanged, then more GPUs or another layout, then changed numerics.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "ftbound/plan.hpp"
#include "ops/job_change.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

// How much a change asks of the user: 0 same numerics and hardware, 1 more GPUs or another parallel layout,
// 2 different numerics (quantised states or weights, adapters instead of full training).
enum Disruption { kSameRun = 0, kLayout = 1, kNumerics = 2 };

struct Candidate {
    std::string what;
    std::vector<std::string> set;      // filled in by `apply` when it depends on the job (micro-batch)
    std::string key;                   // what it changes; two candidates with one key never combine
    Disruption disruption = kSameRun;
    std::function<bool(Job&, std::vector<std::string>&)> apply;   // false: not applicable to this job
};

Candidate fixed(std::string what, std::vector<std::string> set, std::string key, Disruption d,
                std::function<bool(Job&)> apply) {
    return {std::move(what), std::move(set), std::move(key), d,
            [apply](Job& j, std::vector<std::string>&) { return apply(j); }};
}

void add_recompute(std::vector<Candidate>& c, const TrainSpec& t) {
    if (t.recompute != Recompute::full)
        c.push_back(fixed("recompute every block in backward (activation_checkpointing: full)",
                          {"train.activation_checkpointing=full"}, "recompute", kSameRun,
                          [](Job& j) { j.spec.train.recompute = Recompute::full, j.spec.train.recompute_layers = 0; return true; }));
    if (t.recompute == Recompute::none || t.recompute == Recompute::selective)
        c.push_back(fixed("per-op selective recompute: keep matmul and attention outputs (activation_checkpointing: op)",
                          {"train.activation_checkpointing=op"}, "recompute", kSameRun,
                          [](Job& j) { j.spec.train.recompute = Recompute::op; return true; }));
}

void add_loss_and_attention(std::vector<Candidate>& c, const TrainSpec& t) {
    if (t.loss == LossImpl::standard || t.loss == LossImpl::fp32_upcast) {
        c.push_back(fixed("fused linear + cross-entropy (loss: fused)", {"train.loss=fused"}, "loss", kSameRun,
                          [](Job& j) { j.spec.train.loss = LossImpl::fused; return true; }));
        c.push_back(fixed("cross-entropy over chunks of the output (loss: chunked)", {"train.loss=chunked"}, "loss",
                          kSameRun, [](Job& j) { j.spec.train.loss = LossImpl::chunked; return true; }));
    }
    if (t.attention == Attention::eager)
        c.push_back(fixed("flash attention (attention: flash)", {"train.attention=flash"}, "attention", kSameRun,
                          [](Job& j) { j.spec.train.attention = Attention::flash; return true; }));
}

// Megatron-Core's fused SwiGLU keeps its input in fp8 (activation_func_fp8_input_store): half the FFN's saved bytes.
void add_fp8_swiglu_input(std::vector<Candidate>& c, const Job& base) {
    if (base.framework.fused_swiglu && !base.spec.train.activation_func_fp8_input_store && has_swiglu_ffn(base.model))
        c.push_back(fixed("SwiGLU input kept in fp8 for the backward (activation_func_fp8_input_store: true)",
                          {"train.activation_func_fp8_input_store=true"}, "swiglu_input", kNumerics,
                          [](Job& j) { j.spec.train.activation_func_fp8_input_store = true; return true; }));
}

void add_optimizer(std::vector<Candidate>& c, const Job& base) {
    const TrainSpec& t = base.spec.train;
    const bool adam = t.optimizer == Optimizer::adamw || t.optimizer == Optimizer::adam;
    if (adam && t.optimizer_impl != OptimizerImpl::fused)
        c.push_back(fixed("fused optimizer step, no state-sized intermediates (optimizer_impl: fused)",
                          {"train.optimizer_impl=fused"}, "optimizer_impl", kSameRun,
                          [](Job& j) { j.spec.train.optimizer_impl = OptimizerImpl::fused; return true; }));
    if (!t.optimizer_in_backward && base.spec.parallel.zero == 0 && t.global_batch == t.micro_batch * base.spec.parallel.dp)
        c.push_back(fixed("optimizer step inside backward, gradients freed layer by layer (optimizer_in_backward: true)",
                          {"train.optimizer_in_backward=true"}, "optimizer_in_backward", kSameRun,
                          [](Job& j) { j.spec.train.optimizer_in_backward = true; return true; }));
    if (adam)
        c.push_back(fixed("paged AdamW: states in CUDA unified memory, evicted to host RAM (optimizer: paged_adamw)",
                          {"train.optimizer=paged_adamw"}, "optimizer", kSameRun,
                          [](Job& j) { j.spec.train.optimizer = Optimizer::paged_adamw; return true; }));
    if (adam)
        c.push_back(fixed("8-bit AdamW states (optimizer: adamw_8bit)", {"train.optimizer=adamw_8bit"}, "optimizer",
                          kNumerics, [](Job& j) { j.spec.train.optimizer = Optimizer::adamw_8bit; return true; }));
    if (t.optimizer == Optimizer::adamw_8bit)
        c.push_back(fixed("paged 8-bit AdamW (optimizer: paged_adamw_8bit)", {"train.optimizer=paged_adamw_8bit"},
                          "optimizer", kSameRun,
                          [](Job& j) { j.spec.train.optimizer = Optimizer::paged_adamw_8bit; return true; }));
}

void add_sharding_and_offload(std::vector<Candidate>& c, const Job& base) {
    const ParallelSpec& p = base.spec.parallel;
    for (int z = p.zero + 1; z <= 3 && p.dp > 1; ++z)
        c.push_back(fixed("shard " + std::string(z == 1 ? "optimizer states" : z == 2 ? "optimizer states and gradients"
                                                                                      : "parameters, gradients and optimizer states") +
                              " across the " + std::to_string(p.dp) + " data-parallel GPUs (ZeRO-" + std::to_string(z) + ")",
                          {"parallel.zero=" + std::to_string(z)}, "zero", kSameRun,
                          [z](Job& j) { j.spec.parallel.zero = z; return true; }));
    const OffloadSpec& off = base.spec.offload;
    if (off.activations == OffloadTarget::none) {
        c.push_back(fixed("saved activations in host RAM (offload.activations: cpu)", {"offload.activations=cpu"},
                          "offload.activations", kSameRun,
                          [](Job& j) { j.spec.offload.activations = OffloadTarget::cpu; return true; }));
        c.push_back(fixed("full recompute with its checkpoints in host RAM (offload.activations: checkpoints)",
                          {"train.activation_checkpointing=full", "offload.activations=checkpoints"}, "recompute",
                          kSameRun, [](Job& j) {
                              j.spec.train.recompute = Recompute::full, j.spec.train.recompute_layers = 0;
                              j.spec.offload.activations = OffloadTarget::checkpoints;
                              return true;
                          }));
    }
    if (off.optimizer == OffloadTarget::none)
        c.push_back(fixed("optimizer states in host RAM (offload.optimizer: cpu)", {"offload.optimizer=cpu"},
                          "offload.optimizer", kSameRun,
                          [](Job& j) { j.spec.offload.optimizer = OffloadTarget::cpu; return true; }));
    if (off.params == OffloadTarget::none)
        c.push_back(fixed("ZeRO-3 with parameters and optimizer in host RAM (offload.params: cpu)",
                          {"parallel.zero=3", "offload.params=cpu", "offload.optimizer=cpu"}, "zero", kSameRun,
                          [](Job& j) {
                              j.spec.parallel.zero = 3;
                              j.spec.offload.params = OffloadTarget::cpu;
                              j.spec.offload.optimizer = OffloadTarget::cpu;
                              return true;
                          }));
}

// Another parallel layout on the same GPUs (tensor, context parallel) or twice the nodes; dp follows.
void add_layout(std::vector<Candidate>& c, const Job& base) {
    const ParallelSpec& p = base.spec.parallel;
    auto relayout = [](Job& j, int64_t tp, int64_t cp) {
        const int64_t mp = tp * j.spec.parallel.pp * cp;
        if (j.system.total_devices() % mp != 0 || j.spec.train.seq_len % cp != 0) return false;
        j.spec.parallel.tp = tp, j.spec.parallel.cp = cp;
        j.spec.parallel.dp = j.system.total_devices() / mp;
        const int64_t per_step = j.spec.train.micro_batch * j.spec.parallel.dp;
        j.spec.train.global_batch = std::max(per_step, j.spec.train.global_batch / per_step * per_step);
        return true;
    };
    for (int64_t tp = p.tp * 2; tp <= base.system.devices_per_node; tp *= 2)
        c.push_back(fixed("tensor parallel over " + std::to_string(tp) + " GPUs of a node (tp: " + std::to_string(tp) + ")",
                          {"parallel.tp=" + std::to_string(tp), "parallel.dp=auto"}, "tp", kLayout,
                          [tp, relayout](Job& j) { return relayout(j, tp, j.spec.parallel.cp); }));
    for (int64_t cp = p.cp * 2; cp <= base.system.total_devices(); cp *= 2)
        c.push_back(fixed("context parallel: each sequence split over " + std::to_string(cp) + " GPUs (cp: " +
                              std::to_string(cp) + ")",
                          {"parallel.cp=" + std::to_string(cp), "parallel.dp=auto"}, "cp", kLayout,
                          [cp, relayout](Job& j) { return relayout(j, j.spec.parallel.tp, cp); }));
    if (p.zero >= 1 || base.spec.offload.optimizer != OffloadTarget::none)
        c.push_back(fixed("twice the nodes: the sharded state spreads over twice the GPUs (hardware.nodes: " +
                              std::to_string(base.system.nodes * 2) + ")",
                          {"hardware.nodes=" + std::to_string(base.system.nodes * 2), "parallel.dp=auto"}, "nodes",
                          kLayout, [](Job& j) {
                              if (j.system.inter_node.bandwidth_GBps <= 0) return false;   // no fabric named
                              j.system.nodes *= 2;
                              j.spec.parallel.dp *= 2;
                              j.spec.train.global_batch *= 2;
                              return true;
                          }));
}

void add_method(std::vector<Candidate>& c, const TrainSpec& t) {
    if (t.micro_batch > 1)
        c.push_back({"a smaller micro-batch with more gradient accumulation", {}, "micro_batch", kSameRun,
                     [](Job& j, std::vector<std::string>& set) {
                         const int64_t mb = max_micro_batch(j);
                         if (mb <= 0 || mb >= j.spec.train.micro_batch) return false;
                         int64_t best = mb;   // keep the global batch: the largest that fits and divides it
                         while (best > 1 && j.spec.train.global_batch % (best * j.spec.parallel.dp) != 0) --best;
                         j.spec.train.micro_batch = best;
                         set = {"train.micro_batch=" + std::to_string(best)};
                         return true;
                     }});
    if (t.method == Method::full)
        c.push_back(fixed("LoRA adapters instead of full fine-tuning (method: lora)", {"train.method=lora"}, "method",
                          kNumerics, [](Job& j) { j.spec.train.method = Method::lora; return true; }));
    if (t.method == Method::full || t.method == Method::lora)
        c.push_back(fixed("QLoRA: 4-bit NF4 base weights with LoRA adapters (method: qlora)", {"train.method=qlora"},
                          "method", kNumerics, [](Job& j) { j.spec.train.method = Method::qlora; return true; }));
}

std::vector<Candidate> candidates(const Job& base) {
    std::vector<Candidate> c;
    add_recompute(c, base.spec.train);
    add_loss_and_attention(c, base.spec.train);
    add_fp8_swiglu_input(c, base);
    add_optimizer(c, base);
    add_sharding_and_offload(c, base);
    add_layout(c, base);
    add_method(c, base.spec.train);
    return c;
}

struct Trial {
    std::vector<size_t> picks;         // candidate indices, in order applied
    std::vector<std::string> set;
    MemoryResult memory;
    int disruption = 0;
    // The changed job, held only by the trials extended further (the frontier, restore_jobs): the trials waiting to
    // be ranked hold none, so that memory holds a few jobs rather than one per trial (each copy is fresh heap the
    // kernel maps page by page: a 70B job's search touched 3 MB). On the heap, so that a trial moves as a few words.
    std::unique_ptr<Job> job;
};

bool fits(const MemoryResult& m) { return m.verdict == MemoryVerdict::fits && m.host_fits; }

// `base` with candidate `k` applied, or nothing when it does not apply or breaks a layout rule; `set` receives
// the settings the candidate names.
std::optional<Job> apply_candidate(const Job& base, const Candidate& c, std::vector<std::string>& set) {
    set = c.set;
    return changed_job(base, [&](Job& j) { return c.apply(j, set); });
}

// `from` with candidate `k` applied on top, planned (without its job), or nothing when it does not apply or breaks
// a layout rule.
std::optional<Trial> extend(const Trial& from, const std::vector<Candidate>& cands, size_t k) {
    std::vector<std::string> set;
    const std::optional<Job> changed = apply_candidate(*from.job, cands[k], set);
    if (!changed) return std::nullopt;
    Trial t{from.picks, from.set, plan_memory(*changed), std::max(from.disruption, int(cands[k].disruption)), nullptr};
    t.picks.push_back(k);
    t.set.insert(t.set.end(), set.begin(), set.end());
    return t;
}

// The frontier's jobs again: each trial's picks applied to `base` in order, as extend applied them.
void restore_jobs(std::vector<Trial>& frontier, const Job& base, const std::vector<Candidate>& cands) {
    for (Trial& t : frontier) {
        Job job = base;
        std::vector<std::string> set;
        for (size_t k : t.picks) job = apply_candidate(job, cands[k], set).value();
        t.job = std::make_unique<Job>(std::move(job));
    }
}

Change to_change(const Trial& t, const std::vector<Candidate>& cands) {
    std::string what;
    for (size_t k : t.picks) what += (what.empty() ? "" : " + ") + cands[k].what;
    return {what, t.set, t.memory};
}

}  // namespace

std::vector<Change> changes_that_fit(const Job& job, size_t max_results) {
    const std::vector<Candidate> cands = candidates(job);
    // Breadth first: all single changes, then pairs and triples built on the partial sets that saved most,
    // never two changes of the same kind. The first size with a fit is the answer.
    std::vector<Trial> frontier;
    frontier.push_back(Trial{{}, {}, plan_memory(job), 0, std::make_unique<Job>(job)});
    constexpr size_t kKeep = 6;        // partial sets carried to the next size (the ones that saved most)
    for (int size = 1; size <= 3; ++size) {
        std::vector<Trial> next, found;
        std::set<std::vector<size_t>> seen;
        for (const Trial& from : frontier) {
            std::set<std::string> used;
            for (size_t k : from.picks) used.insert(cands[k].key);
            for (size_t k = 0; k < cands.size(); ++k) {
                if (used.count(cands[k].key)) continue;
                std::vector<size_t> id = from.picks;
                id.push_back(k);
                std::sort(id.begin(), id.end());
                if (!seen.insert(id).second) continue;
                std::optional<Trial> t = extend(from, cands, k);
                if (!t) continue;
                if (fits(t->memory)) found.push_back(std::move(*t));
                else if (t->memory.device_used_bytes < from.memory.device_used_bytes) next.push_back(std::move(*t));
            }
        }
        if (!found.empty()) {
            std::stable_sort(found.begin(), found.end(), [](const Trial& a, const Trial& b) {
                if (a.disruption != b.disruption) return a.disruption < b.disruption;
                return a.memory.device_used_bytes < b.memory.device_used_bytes;
            });
            std::vector<Change> out;
            for (size_t i = 0; i < found.size() && out.size() < max_results; ++i) out.push_back(to_change(found[i], cands));
            return out;
        }
        std::sort(next.begin(), next.end(), [](const Trial& a, const Trial& b) {
            return a.memory.device_used_bytes < b.memory.device_used_bytes;
        });
        if (next.size() > kKeep) next.resize(kKeep);
        restore_jobs(next, job, cands);
        frontier = std::move(next);
    }
    return {};
}

}  // namespace ftb
