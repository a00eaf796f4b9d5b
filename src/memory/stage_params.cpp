#include "memory/stage_params.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace ftb {

StageSplit stage_split(int64_t layers, int64_t pp, int64_t stage, bool edges_as_layers) {
    const int64_t edge = edges_as_layers && pp > 1 ? 1 : 0;   // unit 0 is the embedding, the last unit the head
    const int64_t units = layers + 2 * edge;
    const int64_t base = units / pp, extra = units % pp;
    const int64_t first_unit = stage * base + std::min(stage, extra);
    const int64_t last_unit = first_unit + base + (stage < extra ? 1 : 0);
    StageSplit s;
    s.first = std::clamp<int64_t>(first_unit - edge, 0, layers);
    s.last = std::clamp<int64_t>(last_unit - edge, s.first, layers);
    s.has_embedding = stage == 0;
    s.has_head = stage == pp - 1;
    return s;
}

bool same_block_as_previous(const Job& job, const TrainingSetup& set, int64_t li) {
    if (li <= 0 || set.blocks_limited()) return false;
    const auto& layers = job.model.layers;
    return layers[size_t(li)] == layers[size_t(li - 1)] && set.block_trains(li) == set.block_trains(li - 1) &&
           set.block_needs_grad(li) == set.block_needs_grad(li - 1);
}

namespace {

// The adapters' trainable parameters in one block: OFT's rotations or LoRA's A and B on the linears `set` adapts.
int64_t adapter_params_in_layer(const Job& job, const TrainingSetup& set, const LayerSpec& l) {
    const TrainSpec& t = job.spec.train;
    return set.oft ? oft_params_in_layer(l, set.lora_mask, set.fused_qkv, t.oft) : lora_params_in_layer(l, set.lora_mask, t.lora.rank);
}

// One block's parameters into `p`: trainable, frozen or quantised, plus adapters and Adafactor's factored state.
void add_block(const Job& job, const TrainingSetup& all, int64_t li, double tp, double ep, StageParams& p) {
    std::optional<TrainingSetup> scratch;   // a copy only where some blocks are outside the trained part
    const TrainingSetup& set = all.blocks_limited() ? block_setup(all, li, scratch.emplace()) : all;
    const LayerSpec& l = job.model.layers[size_t(li)];
    const bool trains = all.block_trains(li);
    const bool qlora = quantised_base(job.spec.train.method);
    // A block left without adapters may keep its attention unquantised (FrameworkProfile
    // qlora_unadapted_attention_unquantised): its attention then counts as frozen, its MLP as quantised.
    const bool attention_plain = qlora && set.unadapted_block && job.framework.qlora_unadapted_attention_unquantised;
    // A state-space mixer's linears count with attention's (quantised alike); its convolution, A, D, step-size bias
    // and norms with the small tensors.
    const double attn = double(l.attention_params() + l.ssm_linear_params()) / tp;
    double ffn = double(l.ffn_params());
    if (l.experts > 0) {
        const double router = double(l.hidden * l.experts);
        ffn = (ffn - router) / ep + router;
    }
    ffn /= tp;
    // Norms and the other small tensors that stay unquantised: T5's position table, a learnable activation's scalars.
    const double norms = double(l.norm_params() + l.relative_attention_params + l.activation_params +
                                (l.ssm_params() - l.ssm_linear_params()));
    const double layer = attn + ffn + norms;
    p.blocks += layer;
    if (layer > p.largest_layer) p.largest_layer_quantised = qlora && !trains ? (attention_plain ? 0 : attn) + ffn : 0;
    p.largest_layer = std::max(p.largest_layer, layer);
    if (qlora && !trains)
        p.largest_quantised = std::max({p.largest_quantised, double(l.hidden) * double(l.ffn_intermediate) / tp,
                                        attention_plain ? 0.0 : double(l.hidden) * double(l.q_dim()) / tp,
                                        double(l.hidden) * double(l.ssm_in_width()) / tp});
    if (trains) {
        p.trainable += layer;
        p.linear_weights += attn + ffn;
        const double widest = double(std::max({l.q_dim(), l.ffn_intermediate * std::max<int64_t>(1, l.experts),
                                               l.ssm_in_width()}));
        p.largest_trainable_matrix = std::max(p.largest_trainable_matrix, double(l.hidden) * widest / tp);
    } else if (qlora) {
        p.quantised += (attention_plain ? 0 : attn) + ffn;
        p.frozen += norms + (attention_plain ? attn : 0);
    } else {
        p.frozen += layer;
    }
    if (set.adapters) p.trainable += double(adapter_params_in_layer(job, set, l)) / tp;
    if (job.spec.train.optimizer == Optimizer::adafactor && trains) {
        // Factored second moment: rows + cols per matrix (Shazeer & Stern 2018); vectors keep full state.
        const double h = double(l.hidden), i = double(l.ffn_intermediate);
        const int mats_ffn = l.ffn_kind == FfnKind::gated ? 3 : 2;
        p.adafactor_state += (4 * (h + double(l.q_dim())) + mats_ffn * (h + i)) / tp + norms;
    }
}

// LoRA on an encoder's tower (train.encoder: adapters): every block's q, k, v, o (hidden x hidden) and fc1, fc2
// (hidden x intermediate) that the text targets name carry adapters (up_proj / fc1 names fc1, down_proj / fc2 fc2,
// as lora_target_bits maps them); under qlora those block linears are quantised like the text blocks' (torchtune
// lora_clip_attention and clip_mlp with quantize_base), the rest of the tower and the projector stay frozen.
void add_encoder_adapters(const Job& job, const TrainingSetup& set, StageParams& p) {
    const EncoderSpec& e = job.model.encoder;
    const double h = double(e.hidden), i = double(e.intermediate), r = double(job.spec.train.lora.rank);
    const uint32_t mask = set.lora_mask;
    double per_block = 0;
    for (const uint32_t bit : {kQ, kK, kV, kO})
        if (mask & bit) per_block += r * (h + h);
    if (mask & kUp) per_block += r * (h + i);
    if (mask & kDown) per_block += r * (i + h);
    p.trainable += double(e.layers) * per_block;
    const double linears = job.spec.train.method == Method::qlora ? double(e.layers) * (4 * h * h + 2 * h * i) : 0;
    p.quantised += linears;
    p.frozen += double(job.model.vision_params) - linears;
}

// A multimodal checkpoint's encoder and projector, held by the first stage beside the embedding: they train with the
// text model's weights (method full, or its cross-attention blocks under train.blocks) unless train.encoder freezes
// the tower or both (freeze, and LoRA without train.encoder: adapters, keep them frozen).
void add_encoder(const Job& job, const TrainingSetup& set, StageParams& p) {
    const EncoderSpec& e = job.model.encoder;
    if (set.adapters && job.spec.train.encoder == EncoderTraining::adapters) return add_encoder_adapters(job, set, p);
    const double tower = double(job.model.vision_params - e.projector_params), projector = double(e.projector_params);
    const bool text_trains = set.full && (set.first_trainable_layer == 0 || set.blocks_limited());
    const EncoderTraining what = job.spec.train.encoder;
    const bool tower_trains = text_trains && what == EncoderTraining::trained;
    const bool projector_trains = text_trains && what != EncoderTraining::frozen;
    (tower_trains ? p.trainable : p.frozen) += tower;
    (projector_trains ? p.trainable : p.frozen) += projector;
}

// Whether PEFT puts an adapter on a linear outside the blocks named `name`: all-linear takes every nn.Linear but the
// output head; a target matches a module's name or its dotted end (peft/tuners/tuners_utils.py
// check_target_module_exists: key == target or key.endswith("." + target)).
bool adapts(const LoraConfig& lora, const std::string& name) {
    if (lora.all_linear) return true;
    for (const auto& t : lora.targets) {
        const auto dot = t.rfind('.');
        if ((dot == std::string::npos ? t : t.substr(dot + 1)) == name) return true;
    }
    return false;
}

// The modules the model holds but its forward never runs (ModelSpec::idle_layers: MiMo's MTP layer), kept with the
// head on the last stage. QLoRA: bitsandbytes quantises every nn.Linear but the output head (transformers
// integrations/bitsandbytes.py replace_with_bnb_linear skips only modules_to_not_convert, which
// get_keys_to_not_convert fills with the output embedding), theirs too. LoRA and freeze keep them frozen. Full
// fine-tuning leaves them requiring a gradient they never receive: DeepSpeed ZeRO and FSDP flatten every such
// parameter into the buffers they give gradients and optimizer state, while torch.optim and the bitsandbytes
// optimizers skip a parameter whose .grad is None (torch/optim/adamw.py _init_group; bitsandbytes
// optim/optimizer.py Optimizer8bit.step), so without ZeRO or FSDP they are stored alone (`held`). PEFT adapts
// their linears by name like any block's, and those adapters never receive a gradient either.
void add_idle_modules(const Job& job, const TrainingSetup& set, double tp, StageParams& p) {
    const ModelSpec& m = job.model;
    if (m.idle_params() == 0) return;
    const int64_t rank = job.spec.train.lora.rank;
    double linears = 0, norms = double(m.idle_norm_params), adapters = 0;
    for (const LayerSpec& l : m.idle_layers) {
        linears += double(l.attention_params() + l.ffn_params() + l.ssm_linear_params());
        norms += double(l.params() - l.attention_params() - l.ffn_params() - l.ssm_linear_params());
        if (set.adapters) adapters += double(adapter_params_in_layer(job, set, l));
    }
    for (const IdleLinear& x : m.idle_linears) {
        linears += double(x.in * x.out);
        if (!set.adapters || !adapts(job.spec.train.lora, x.name)) continue;
        adapters += set.oft ? double(oft_params_per_linear(x.in, oft_block_size_for(job.spec.train.oft, x.in)))
                            : double(rank * (x.in + x.out));
    }
    linears /= tp;
    adapters /= tp;
    double& unreached = job.spec.parallel.zero >= 1 ? p.trainable : p.held;
    const Method method = job.spec.train.method;
    if (quantised_base(method)) {
        p.quantised += linears;
        p.frozen += norms;
    } else if (method == Method::full) {
        unreached += linears + norms;
    } else {
        p.frozen += linears + norms;
    }
    unreached += adapters;
}

// The embedding (first stage) and the final norms + output head (last stage).
void add_embedding_and_head(const Job& job, const TrainingSetup& set, const StageSplit& sp, double tp, StageParams& p) {
    const ModelSpec& m = job.model;
    const bool qlora = quantised_base(job.spec.train.method);
    const double vocab_shard = double(m.vocab) * double(m.hidden) / tp;
    const bool head_trains = set.head_trains();   // freeze trains the head with the last blocks; LoRA keeps it frozen
    auto add_matrix = [&](double n, bool trains) {
        if (trains) {
            p.trainable += n;
            p.linear_weights += n;
            p.largest_trainable_matrix = std::max(p.largest_trainable_matrix, n);
        } else {
            p.frozen += n;
        }
    };
    if (sp.has_embedding) {
        const double emb = vocab_shard + double(m.position_embedding_params) + double(m.embedding_norm_params) +
                           double(m.extra_params);
        if (set.embedding_trains()) {
            p.trainable += emb;
            p.largest_trainable_matrix = std::max(p.largest_trainable_matrix, vocab_shard);
        } else if (set.full && set.blocks_limited()) {
            // mllama's extra parameters, the 8 image-token embedding rows and the cross-attention gates (read_mllama),
            // train with the cross-attention blocks: torchtune's fusion parameters (FusionEmbedding.fusion_params,
            // torchtune/modules/model_fusion/_fusion_layers.py l.236-240).
            p.trainable += double(m.extra_params);
            p.frozen += emb - double(m.extra_params);
        } else {
            p.frozen += emb;
        }
        add_encoder(job, set, p);
    }
    if (!sp.has_head) return;
    const double final_norms = double(m.final_norms) * double(m.final_norm_params);
    if (head_trains) p.trainable += final_norms;
    else p.frozen += final_norms;
    // A tied head shares the embedding matrix; across pipeline stages the last stage keeps its own copy.
    const bool head_quantised = qlora && job.framework.qlora_quantizes_lm_head && !m.tie_word_embeddings;
    if (head_quantised) {
        p.quantised += vocab_shard;
        p.largest_quantised = std::max(p.largest_quantised, vocab_shard);
    } else if (!m.tie_word_embeddings) {
        add_matrix(vocab_shard + (m.lm_head_bias ? double(m.vocab) / tp : 0), head_trains);
    } else if (!sp.has_embedding) {
        add_matrix(vocab_shard, head_trains);
    } else if (head_trains) {
        p.linear_weights += vocab_shard;   // the tied matrix is also read by the head matmul
    }
    if (!head_quantised) p.head_weights = vocab_shard;
    if (head_trains && !head_quantised) {
        p.head_matrix = vocab_shard;
        p.head_tied = m.tie_word_embeddings && sp.has_embedding;
    }
    if (set.lora_on_head) {
        const TrainSpec& t = job.spec.train;
        // OFT rotates the head's input (hidden wide); LoRA adds A (hidden x r) and B (r x vocab).
        p.trainable += (set.oft ? double(oft_params_per_linear(m.hidden, oft_block_size_for(t.oft, m.hidden)))
                                : double(t.lora.rank) * double(m.hidden + m.vocab)) / tp;
    }
    if (job.spec.train.optimizer == Optimizer::adafactor && head_trains)
        p.adafactor_state += double(m.vocab) / tp + double(m.hidden);
}

// `block`'s parameters (add_block into an empty StageParams) added to `p`, as add_block would have added them.
void merge_block(StageParams& p, const StageParams& block) {
    p.trainable += block.trainable, p.frozen += block.frozen, p.quantised += block.quantised;
    p.linear_weights += block.linear_weights, p.adafactor_state += block.adafactor_state, p.blocks += block.blocks;
    if (block.largest_layer > p.largest_layer) p.largest_layer_quantised = block.largest_layer_quantised;
    p.largest_layer = std::max(p.largest_layer, block.largest_layer);
    p.largest_quantised = std::max(p.largest_quantised, block.largest_quantised);
    p.largest_trainable_matrix = std::max(p.largest_trainable_matrix, block.largest_trainable_matrix);
}

}  // namespace

StageParams stage_params(const Job& job, const TrainingSetup& set, const StageSplit& sp, bool unsharded) {
    const ParallelSpec& par = job.spec.parallel;
    const double tp = unsharded ? 1.0 : double(par.tp), ep = unsharded ? 1.0 : double(par.ep);
    StageParams p;
    StageParams block;
    for (int64_t li = sp.first; li < sp.last; ++li) {
        if (li == sp.first || !same_block_as_previous(job, set, li)) {
            block = StageParams{};
            add_block(job, set, li, tp, ep, block);
        }
        merge_block(p, block);
    }
    add_embedding_and_head(job, set, sp, tp, p);
    if (sp.has_head) add_idle_modules(job, set, tp, p);
    return p;
}

}  // namespace ftb
