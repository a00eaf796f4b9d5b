// "What would make it fit": candidate changes, each re-planned with the full memory model; only changes
// that fit are offered, the least disruptive first (numerics unchanged before numerics changed).
#include <algorithm>
#include <functional>

#include "ops/job_change.hpp"
#include "ftbound/plan.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

struct Candidate {
    std::string what;
    std::vector<std::string> set;
    std::function<bool(Job&)> apply;   // false: not applicable to this job
};

std::vector<Candidate> candidates(const Job& base) {
    std::vector<Candidate> c;
    const TrainSpec& t = base.spec.train;
    const ParallelSpec& p = base.spec.parallel;
    if (t.recompute != Recompute::full)
        c.push_back({"recompute every block in backward (activation_checkpointing: full)",
                     {"train.activation_checkpointing=full"},
                     [](Job& j) { j.spec.train.recompute = Recompute::full; return true; }});
    if (t.loss == LossImpl::standard || t.loss == LossImpl::fp32_upcast)
        c.push_back({"fused linear + cross-entropy (loss: fused)", {"train.loss=fused"},
                     [](Job& j) { j.spec.train.loss = LossImpl::fused; return true; }});
    if (t.attention == Attention::eager)
        c.push_back({"flash attention (attention: flash)", {"train.attention=flash"},
                     [](Job& j) { j.spec.train.attention = Attention::flash; return true; }});
    for (int z = p.zero + 1; z <= 3 && p.dp > 1; ++z)
        c.push_back({"shard " + std::string(z == 1 ? "optimizer states" : z == 2 ? "optimizer states and gradients" : "parameters, gradients and optimizer states") +
                         " across the " + std::to_string(p.dp) + " data-parallel GPUs (ZeRO-" + std::to_string(z) + ")",
                     {"parallel.zero=" + std::to_string(z)},
                     [z](Job& j) { j.spec.parallel.zero = z; return true; }});
    if (t.optimizer == Optimizer::adamw || t.optimizer == Optimizer::adam)
        c.push_back({"8-bit AdamW states (optimizer: adamw_8bit)", {"train.optimizer=adamw_8bit"},
                     [](Job& j) { j.spec.train.optimizer = Optimizer::adamw_8bit; return true; }});
    if (base.spec.offload.optimizer == OffloadTarget::none)
        c.push_back({"optimizer states in host RAM (offload.optimizer: cpu)", {"offload.optimizer=cpu"},
                     [](Job& j) { j.spec.offload.optimizer = OffloadTarget::cpu; return true; }});
    if (base.spec.offload.params == OffloadTarget::none)
        c.push_back({"ZeRO-3 with parameters and optimizer in host RAM (offload.params: cpu)",
                     {"parallel.zero=3", "offload.params=cpu", "offload.optimizer=cpu"},
                     [](Job& j) {
                         j.spec.parallel.zero = 3;
                         j.spec.offload.params = OffloadTarget::cpu;
                         j.spec.offload.optimizer = OffloadTarget::cpu;
                         return true;
                     }});
    for (int64_t tp = p.tp * 2; tp <= base.system.devices_per_node; tp *= 2)
        c.push_back({"tensor parallel over " + std::to_string(tp) + " GPUs of a node (tp: " + std::to_string(tp) + ")",
                     {"parallel.tp=" + std::to_string(tp), "parallel.dp=auto"},
                     [tp](Job& j) {
                         const int64_t mp = tp * j.spec.parallel.pp * j.spec.parallel.cp;
                         if (j.system.total_devices() % mp != 0) return false;
                         j.spec.parallel.tp = tp;
                         j.spec.parallel.dp = j.system.total_devices() / mp;
                         return true;
                     }});
    if (t.micro_batch > 1)
        c.push_back({"a smaller micro-batch with more gradient accumulation", {},
                     [](Job& j) {
                         const int64_t mb = max_micro_batch(j);
                         if (mb <= 0 || mb >= j.spec.train.micro_batch) return false;
                         // keep the global batch: the largest micro-batch that fits and divides it
                         int64_t best = mb;
                         while (best > 1 && j.spec.train.global_batch % (best * j.spec.parallel.dp) != 0) --best;
                         j.spec.train.micro_batch = best;
                         return true;
                     }});
    if (t.method == Method::full)
        c.push_back({"LoRA adapters instead of full fine-tuning (method: lora)", {"train.method=lora"},
                     [](Job& j) { j.spec.train.method = Method::lora; return true; }});
    if (t.method == Method::full || t.method == Method::lora)
        c.push_back({"QLoRA: 4-bit NF4 base weights with LoRA adapters (method: qlora)", {"train.method=qlora"},
                     [](Job& j) { j.spec.train.method = Method::qlora; return true; }});
    return c;
}

}  // namespace

std::vector<Change> changes_that_fit(const Job& job, size_t max_results) {
    std::vector<Change> out;
    // Greedy: try each single change; if none fits, keep the one that saves most and try again on top (3 rounds).
    Job current = job;
    std::vector<std::string> applied_what, applied_set;
    for (int round = 0; round < 3 && out.empty(); ++round) {
        double best_used = plan_memory(current).device_used_bytes;
        Job best_job = current;
        std::string best_what;
        std::vector<std::string> best_set;
        for (auto& cand : candidates(current)) {
            const std::optional<Job> changed = changed_job(current, cand.apply);
            if (!changed) continue;
            const Job& trial = *changed;
            MemoryResult m = plan_memory(trial);
            if (cand.set.empty() && cand.what.find("micro-batch") != std::string::npos)
                cand.set = {"train.micro_batch=" + std::to_string(trial.spec.train.micro_batch)};
            auto what = applied_what;
            what.push_back(cand.what);
            auto set = applied_set;
            set.insert(set.end(), cand.set.begin(), cand.set.end());
            if (m.verdict == MemoryVerdict::fits && m.host_fits) {
                std::string joined;
                for (const auto& w : what) joined += (joined.empty() ? "" : " + ") + w;
                out.push_back({joined, set, m});
            } else if (m.device_used_bytes < best_used) {
                best_used = m.device_used_bytes;
                best_job = trial;
                best_what = cand.what;
                best_set = cand.set;
            }
        }
        if (best_what.empty()) break;
        current = best_job;
        applied_what.push_back(best_what);
        applied_set.insert(applied_set.end(), best_set.begin(), best_set.end());
    }
    if (out.size() > max_results) out.resize(max_results);
    return out;
}

}  // namespace ftb
