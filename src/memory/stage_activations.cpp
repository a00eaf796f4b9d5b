#include "memory/stage_activations.hpp"

#include <algorithm>

#include "memory/activations.hpp"

namespace ftb {

double in_flight_micro_batches(const ParallelSpec& par, int64_t ga, int64_t stage) {
    // 1F1B: pp - stage, at most the micro-batches of a step; GPipe: all of them; interleaved: 1 + (p-1)/(p*v)
    // more on the first stage (Korthikanti et al. 2022 §4.2.3).
    if (par.pp <= 1) return 1;
    double in_flight = par.pp_schedule == PipelineSchedule::gpipe ? double(ga) : double(std::min<int64_t>(par.pp - stage, ga));
    if (par.pp_schedule == PipelineSchedule::interleaved && par.virtual_stages > 1 && stage == 0)
        in_flight *= 1.0 + double(par.pp - 1) / double(par.pp * par.virtual_stages);
    return in_flight;
}

namespace {

// Saved bytes of the final norm and head input (last stage) and embedding-level dropout masks (first stage).
double edge_activations(const Job& job, const TrainingSetup& set, const StageSplit& sp, double tokens, double sp_div) {
    const ModelSpec& m = job.model;
    double bytes = 0;
    if (sp.has_head) {
        bytes += norm_saved_per_token(m, job, set, set.full) * tokens / sp_div;
        if (set.full || set.lora_on_head) bytes += set.bytes.matmul_in * double(m.hidden) * tokens / sp_div;
        if (m.encoder_decoder) bytes += set.bytes.act * double(m.hidden) * tokens;   // encoder output for cross-attention
    }
    if (sp.has_embedding && m.hidden_dropout > 0) bytes += double(m.hidden) * tokens;
    return bytes;
}

}  // namespace

StageActivations stage_activations(const Job& job, const TrainingSetup& set, const StageSplit& sp, int64_t stage) {
    const ModelSpec& m = job.model;
    const TrainSpec& tr = job.spec.train;
    const ParallelSpec& par = job.spec.parallel;
    const double tp = double(par.tp);
    const double sp_div = par.sequence_parallel ? tp : 1.0;
    const double tokens = double(set.tokens_per_micro_batch);
    StageActivations out;
    double total = 0, block_max = 0, block_work = 0, block_input = 0;
    out.per_block.reserve(size_t(sp.blocks()));
    for (int64_t li = sp.first; li < sp.last; ++li) {
        const LayerSpec& l = m.layers[size_t(li)];
        const bool trains = set.full && li >= set.first_trainable_layer;
        const bool needs_grad = set.adapters || li >= set.first_trainable_layer;
        const LayerActivation a = layer_activation(l, m, job, set, trains, needs_grad, tr.seq_len);
        if (li == sp.first) out.first_block_per_token = a.per_token;
        const double tp_part = a.tp_sharded_per_token / tp;
        const double rep_part = (a.per_token.total() - a.tp_sharded_per_token) / sp_div;
        const double working = (tp_part + rep_part) * tokens;
        double saved = working;
        if (tr.recompute == Recompute::selective) saved -= a.scores_per_token / tp * tokens;
        if (tr.recompute == Recompute::full) saved = needs_grad ? a.layer_input_per_token / sp_div * tokens : 0;
        out.per_block.push_back(saved);
        total += saved;
        block_max = std::max(block_max, saved);
        block_work = std::max(block_work, working);
        block_input = std::max(block_input, a.layer_input_per_token / sp_div * tokens);
    }
    total += edge_activations(job, set, sp, tokens, sp_div);
    out.in_flight = in_flight_micro_batches(par, set.grad_accumulation, stage);
    out.resident = total * out.in_flight;
    // With full recompute, backward rebuilds one block at a time.
    if (tr.recompute == Recompute::full) out.recompute_work = block_work;
    if (job.spec.offload.activations != OffloadTarget::none) {
        // Offloaded activations live in host memory; two blocks stay on the GPU (double buffering).
        out.offloaded = true;
        out.host = out.resident;
        out.resident = std::min(out.resident, 2 * std::max(block_max, block_input));
    }
    return out;
}

}  // namespace ftb
