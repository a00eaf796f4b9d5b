#include "memory/stage_activations.hpp"

#include <algorithm>
#include <optional>

#include "memory/activations.hpp"

namespace ftb {

double in_flight_micro_batches(const ParallelSpec& par, int64_t ga, int64_t stage) {
    // 1F1B: pp - stage, at most the micro-batches of a step; GPipe: all of them. Interleaved: in units of the
    // stage's blocks, for chunks of equal size (interleaved_resident_bytes counts chunk by chunk).
    if (par.pp <= 1) return 1;
    if (par.pp_schedule == PipelineSchedule::interleaved && par.virtual_stages > 1) {
        const std::vector<double> equal_chunks(size_t(par.virtual_stages), 1.0);
        return interleaved_resident_bytes(equal_chunks, par.pp, stage, ga) / double(par.virtual_stages);
    }
    return par.pp_schedule == PipelineSchedule::gpipe ? double(ga) : double(std::min<int64_t>(par.pp - stage, ga));
}

namespace {

// Walks the chunk column of Megatron's interleaved schedule table in order, without a division per entry: the
// micro-batches run in groups of `group`, each group chunk after chunk (the last group may be shorter).
class ScheduleChunks {
public:
    ScheduleChunks(int64_t ga, int64_t group, int64_t chunks)
        : ga_(ga), group_(group), chunks_(chunks), in_group_(std::min(group, ga)) {}
    int64_t chunk() const { return chunk_; }
    void next() {
        if (++in_chunk_ < in_group_) return;
        in_chunk_ = 0;
        if (++chunk_ < chunks_) return;
        chunk_ = 0;
        group_start_ += group_;
        in_group_ = std::min(group_, ga_ - group_start_);
    }

private:
    int64_t ga_, group_, chunks_, in_group_;
    int64_t group_start_ = 0, chunk_ = 0, in_chunk_ = 0;
};

}  // namespace

double interleaved_resident_bytes(const std::vector<double>& chunk_bytes, int64_t pp, int64_t rank, int64_t ga) {
    // Megatron-LM megatron/core/pipeline_parallel/schedules.py (forward_backward_pipelining_with_interleaving):
    // get_schedule_table runs the micro-batches in groups of microbatch_group_size_per_vp_stage, chunk after chunk
    // within a group; get_pp_rank_microbatches runs (pp - rank - 1) * 2 + (chunks - 1) * group forward chunks
    // before the first backward (at most all of them), then one forward and one backward at a time; backward
    // visits the chunks in reverse (get_model_chunk_id(forward=False): chunks - 1 - chunk). The group defaults to
    // the pipeline size (megatron/core/model_parallel_config.py __post_init__). The peak is the largest sum of the
    // chunk activations that are live after a forward.
    const int64_t chunks = int64_t(chunk_bytes.size()), group = pp, total = ga * chunks;
    const int64_t warmup = std::min(total, (pp - rank - 1) * 2 + (chunks - 1) * group);
    ScheduleChunks forward(ga, group, chunks), backward(ga, group, chunks);
    double live = 0;
    for (int64_t k = 0; k < warmup; ++k, forward.next()) live += chunk_bytes[size_t(forward.chunk())];
    double peak = live;
    for (int64_t k = 0; k + warmup < total; ++k, forward.next(), backward.next()) {
        live += chunk_bytes[size_t(forward.chunk())];
        peak = std::max(peak, live);
        live -= chunk_bytes[size_t(chunks - 1 - backward.chunk())];
    }
    return peak;
}

namespace {

// Saved bytes of the final norm and head input (last stage) and embedding-level dropout masks (first stage).
double edge_activations(const Job& job, const TrainingSetup& set, const StageSplit& sp, double tokens, double sp_div) {
    const ModelSpec& m = job.model;
    double bytes = 0;
    if (sp.has_head) {
        bytes += norm_saved_per_token(m, job, set, set.head_trains()) * tokens / sp_div;
        if (set.head_trains() || set.lora_on_head) bytes += set.bytes.matmul_in * double(m.hidden) * tokens / sp_div;
        if (m.encoder_decoder) bytes += set.bytes.act * double(m.hidden) * tokens;   // encoder output for cross-attention
    }
    if (sp.has_embedding && m.hidden_dropout > 0) bytes += double(m.hidden) * tokens;
    return bytes;
}

// Per-op selective AC (torchtitan SelectiveAC, distributed/activation_checkpoint.py): the block's input is the
// checkpoint; outputs of the ops on the save list stay (attention's output and log-sum-exp; matmul outputs, except
// every second matmul in forward order, which is recomputed); everything else is recomputed in backward.
// Returns bytes per token: the tensor-parallel part and the replicated part.
std::pair<double, double> op_checkpoint_per_token(const LayerSpec& l, const Job& job, const TrainingSetup& set) {
    const double act = set.bytes.act, h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim());
    const double experts = l.experts > 0 ? double(l.experts_per_token) : 1.0, i = double(l.ffn_intermediate) * experts;
    struct Output { double width; bool tp_sharded; };
    std::vector<Output> mms;   // matmul outputs in forward order
    if (set.fused_qkv) mms.push_back({q + 2 * kv, true});
    else mms.insert(mms.end(), {{q, true}, {kv, true}, {kv, true}});
    mms.push_back({h, false});
    if (l.ffn_kind == FfnKind::gated) mms.push_back({i, true});
    mms.insert(mms.end(), {{i, true}, {h, false}});
    double tp = act * q + 4.0 * double(l.heads), rep = set.bytes.residual * h;
    if (job.spec.train.attention == Attention::eager) tp += act * double(l.heads) * double(set.seq_len);
    // Eager, the policy's caching mode stores every MUST_SAVE output for the recompute to replay
    // (torch/utils/checkpoint.py _CachingTorchDispatchMode). Compiled, the policy only tags the graph and the
    // partitioner saves the tagged outputs that backward reads: the block's last matmul (the down projection) feeds
    // only the residual add, whose backward reads nothing, so it is not kept.
    const size_t saved_mms = job.spec.train.compile ? mms.size() - 1 : mms.size();
    for (size_t k = 0; k < saved_mms; k += 2) (mms[k].tp_sharded ? tp : rep) += act * mms[k].width;
    return {tp, rep};
}

// One micro-batch's saved bytes per model chunk of an interleaved stage: the stage's units (its blocks, plus the
// embedding and the head when they count as layers) split evenly over the chunks, the first chunks taking the
// remainder (Megatron-LM megatron/core/transformer/transformer_block.py get_num_layers_to_build: layers per
// virtual stage; account_for_embedding/loss_in_pipeline_split put the embedding in the first chunk of the first
// stage and the loss in the last chunk of the last). The embedding's and the head's own saved bytes (`edges`)
// go to the chunk that holds them.
std::vector<double> chunk_activations(const ParallelSpec& par, const StageSplit& sp, const std::vector<double>& per_block,
                                      double edges) {
    const int64_t chunks = par.virtual_stages;
    const bool edge_units = par.pp_edges_as_layers;
    const int64_t lead = edge_units && sp.has_embedding ? 1 : 0, tail = edge_units && sp.has_head ? 1 : 0;
    const int64_t units = lead + int64_t(per_block.size()) + tail;
    std::vector<double> bytes(size_t(chunks), 0.0);
    int64_t unit = 0;
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t size = units / chunks + (c < units % chunks ? 1 : 0);
        for (int64_t u = unit; u < unit + size; ++u) {
            const int64_t block = u - lead;
            if (block >= 0 && block < int64_t(per_block.size())) bytes[size_t(c)] += per_block[size_t(block)];
        }
        unit += size;
    }
    // Embedding-level bytes (dropout masks) live in the first chunk, the head's inputs in the last.
    bytes[size_t(sp.has_head ? chunks - 1 : 0)] += edges;
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
    // Full recompute of the first recompute_layers blocks of the stage (Megatron recompute_method block), all by default.
    const int64_t recomputed = tr.recompute_layers > 0 ? tr.recompute_layers : sp.blocks();
    StageActivations out;
    double total = 0, block_max = 0, block_work = 0, block_input = 0, checkpoints = 0, scores = 0;
    out.per_block.reserve(size_t(sp.blocks()));
    LayerActivation a;
    std::pair<double, double> op_saved;
    for (int64_t li = sp.first; li < sp.last; ++li) {
        const LayerSpec& l = m.layers[size_t(li)];
        const bool needs_grad = set.block_needs_grad(li);
        if (li == sp.first || !same_block_as_previous(job, set, li)) {
            std::optional<TrainingSetup> scratch;   // a copy only where some blocks are outside the trained part
            const TrainingSetup& block_set = set.blocks_limited() ? block_setup(set, li, scratch.emplace()) : set;
            a = layer_activation(l, m, job, block_set, set.block_trains(li), needs_grad, set.seq_len);
            if (tr.recompute == Recompute::op && needs_grad) op_saved = op_checkpoint_per_token(l, job, set);
        }
        if (li == sp.first) out.first_block_per_token = a.per_token;
        const double tp_part = a.tp_sharded_per_token / tp;
        const double rep_part = (a.per_token.total() - a.tp_sharded_per_token) / sp_div;
        const double working = (tp_part + rep_part) * tokens + a.per_block_bytes;
        const double input = needs_grad ? a.layer_input_per_token / sp_div * tokens : 0;
        double saved = working;
        if (tr.recompute == Recompute::selective) saved -= a.scores_per_token / tp * tokens;
        else if (tr.recompute == Recompute::none) scores += a.scores_per_token / tp * tokens;
        if (tr.recompute == Recompute::full && li - sp.first < recomputed) {
            saved = input;
            checkpoints += input;
        }
        if (tr.recompute == Recompute::op && needs_grad) {
            saved = (op_saved.first / tp + op_saved.second / sp_div) * tokens;
        }
        out.per_block.push_back(saved);
        total += saved;
        block_max = std::max(block_max, saved);
        block_work = std::max(block_work, working);
        block_input = std::max(block_input, input);
    }
    const double edges = edge_activations(job, set, sp, tokens, sp_div);
    total += edges;
    if (par.pp > 1 && par.pp_schedule == PipelineSchedule::interleaved && par.virtual_stages > 1 && total > 0) {
        const std::vector<double> chunks = chunk_activations(par, sp, out.per_block, edges);
        out.in_flight = interleaved_resident_bytes(chunks, par.pp, stage, set.grad_accumulation) / total;
    } else {
        out.in_flight = in_flight_micro_batches(par, set.grad_accumulation, stage);
    }
    const OffloadTarget offload = job.spec.offload.activations;
    out.resident = total * out.in_flight;
    const int64_t sent_blocks = job.spec.offload.activation_layers;
    const bool partial = offload == OffloadTarget::cpu && sent_blocks > 0 && sent_blocks < int64_t(out.per_block.size());
    out.scores_resident = offload == OffloadTarget::none || partial ? scores * out.in_flight : 0;
    // Recompute (full or per-op) rebuilds one block at a time in backward.
    if (tr.recompute == Recompute::full || tr.recompute == Recompute::op) out.recompute_work = block_work;
    if (partial) {
        // Only the first N blocks offload: Megatron-Core hands cpu_offloading_num_layers to Transformer Engine's
        // get_cpu_offload_context as num_layers (transformer_engine/pytorch/cpu_offload.py: tensor_push offloads
        // while `current_group < num_offload_group`, double-buffered); the other blocks, the edges and the scores stay
        // on the GPU, two offloaded blocks in flight.
        double sent = 0, sent_max = 0;
        for (int64_t k = 0; k < sent_blocks; ++k) {
            sent += out.per_block[size_t(k)];
            sent_max = std::max(sent_max, out.per_block[size_t(k)]);
        }
        out.host = sent * out.in_flight;
        out.resident = out.resident - out.host + std::min(out.host, 2 * sent_max);
    } else if (offload == OffloadTarget::cpu) {
        // Every saved tensor goes to host memory; two blocks stay on the GPU (double buffering).
        out.offloaded = true;
        out.host = out.resident;
        out.resident = std::min(out.resident, 2 * std::max(block_max, block_input));
    } else if (offload == OffloadTarget::checkpoints) {
        // Only the recompute checkpoints (block inputs) go to host (Unsloth_Offloaded_Gradient_Checkpointer:
        // hidden_states.to("cpu") in forward, back to the GPU when its block recomputes); two are in flight.
        out.host = checkpoints * out.in_flight;
        out.resident = out.resident - out.host + std::min(out.host, 2 * block_input);
    }
    return out;
}

}  // namespace ftb
