// Hybrids of softmax attention with linear-attention or short-convolution mixers: qwen3_next, the Qwen3.5 family
// (qwen3_5 and qwen3_5_moe, the vision-language checkpoints, and their text models qwen3_5_text and
// qwen3_5_moe_text), lfm2 and kimi_linear (Kimi Delta Attention beside multi-head latent attention). A block's mixer is attention or LayerSpec::ssm (gated_delta, short_conv). Field names and
// defaults follow each family's transformers configuration class; the modules follow modeling_<family>.py (named per
// reader).
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// A config class's defaults for the fields a Qwen hybrid reads (configuration_qwen3_next.py Qwen3NextConfig;
// qwen3_5/modular_qwen3_5.py Qwen3_5TextConfig and qwen3_5_moe/modular_qwen3_5_moe.py Qwen3_5MoeTextConfig override
// some of them).
struct QwenHybridDefaults {
    int64_t vocab, hidden, intermediate, layers, kv_heads;
    int64_t experts, experts_per_token;
};

// Qwen3NextConfig (transformers configuration_qwen3_next.py, commit 008e5743).
constexpr QwenHybridDefaults kQwen3Next{151936, 2048, 5632, 48, 2, 512, 10};
// Qwen3_5TextConfig (qwen3_5/modular_qwen3_5.py, commit 009e78d6): dense, no experts.
constexpr QwenHybridDefaults kQwen3_5{248320, 4096, 12288, 32, 4, 0, 0};
// Qwen3_5MoeTextConfig (qwen3_5_moe/modular_qwen3_5_moe.py, commit 0960594c): every block sparse (no dense width).
constexpr QwenHybridDefaults kQwen3_5Moe{248320, 2048, 0, 40, 2, 256, 8};

// Where a Qwen hybrid's blocks have their mixture of experts.
enum class QwenFfn {
    next,    // Qwen3NextDecoderLayer: sparse unless listed in mlp_only_layers or (i + 1) % decoder_sparse_step != 0
    dense,   // Qwen3_5DecoderLayer: Qwen3_5MLP of intermediate_size in every block
    sparse,  // Qwen3_5MoeDecoderLayer: Qwen3_5MoeSparseMoeBlock in every block
};

// Gated DeltaNet (Qwen3NextGatedDeltaNet, Qwen3_5GatedDeltaNet): linear_num_key_heads key heads of linear_key_head_dim,
// linear_num_value_heads value heads of linear_value_head_dim, a depthwise convolution of linear_conv_kernel_dim taps,
// the gated RMSNorm over each value head.
LayerSpec gated_deltanet_block(const Fields& f, int64_t hidden) {
    const int64_t key_heads = opt_int(f, {"linear_num_key_heads"}, 16, 1);
    const int64_t value_heads = opt_int(f, {"linear_num_value_heads"}, 32, 1);
    if (value_heads % key_heads != 0)
        f.fail("linear_num_value_heads", std::to_string(value_heads) + " value heads are not a multiple of " +
                                             std::to_string(key_heads) + " key heads (linear_num_key_heads)");
    LayerSpec l = base_layer(hidden, 0, 0, 0, 0);
    l.ssm = SsmKind::gated_delta;
    l.ssm_groups = key_heads;
    l.ssm_heads = value_heads;
    l.ssm_state = opt_int(f, {"linear_key_head_dim"}, 128, 1);
    l.ssm_inner = value_heads * opt_int(f, {"linear_value_head_dim"}, 128, 1);
    l.ssm_conv = opt_int(f, {"linear_conv_kernel_dim"}, 4, 1);
    l.ssm_chunk = 64;   // fla chunk_gated_delta_rule's chunk (model/ssm.hpp delta_rule_chunk)
    l.ssm_gated_norm = true;
    return l;
}

// Gated attention (Qwen3NextAttention, which Qwen3.5 reuses): q_proj [hidden -> 2 heads head_dim] carries the sigmoid
// output gate beside the queries (counted as LayerSpec::attention_output_gate: the same weights), k_proj, v_proj,
// o_proj, q_norm and k_norm RMSNorm(head_dim). Adapters see it as afmoe's separate gate_proj: a q_proj adapter here
// is r (hidden + 2 heads head_dim) in truth, r heads head_dim more than counted.
void set_gated_attention(const Fields& f, LayerSpec& l, const QwenHybridDefaults& d) {
    const int64_t heads = opt_int(f, {"num_attention_heads"}, 16, 1);
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, d.kv_heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    if (opt_bool(f, "attention_bias", false))
        f.fail("attention_bias", "a bias on the gated q_proj (queries and gate) is not modelled; expected false");
    l.heads = heads;
    l.kv_heads = kv;
    l.head_dim = opt_int(f, {"head_dim"}, 256, 1);
    l.qk_norm = true;
    l.qk_norm_params = 2 * l.head_dim;
    l.attention_output_gate = true;
}

// Qwen2MoeSparseMoeBlock (Qwen3NextSparseMoeBlock, Qwen3_5MoeSparseMoeBlock): router nn.Linear(hidden, experts),
// experts of moe_intermediate_size (gate_up_proj, down_proj), shared_expert of shared_expert_intermediate_size and
// shared_expert_gate nn.Linear(hidden, 1).
void set_sparse_ffn(const Fields& f, LayerSpec& l, const QwenHybridDefaults& d) {
    l.experts = opt_int(f, {"num_experts"}, d.experts, 1);
    l.experts_per_token = opt_int(f, {"num_experts_per_tok"}, d.experts_per_token, 1);
    if (l.experts_per_token > l.experts)
        f.fail("num_experts_per_tok", std::to_string(l.experts_per_token) + " experts per token of " +
                                          std::to_string(l.experts) + " (num_experts)");
    l.ffn_intermediate = opt_int(f, {"moe_intermediate_size"}, 512, 1);
    l.shared_expert_intermediate = opt_int(f, {"shared_expert_intermediate_size"}, 512, 0);
    l.shared_expert_gate = l.shared_expert_intermediate > 0;
}

// A list of one of `choices` per layer (`layer_types`), or none when the config leaves it out.
std::vector<std::string> typed_layers(const Fields& f, int64_t layers, const std::vector<std::string>& choices) {
    std::vector<std::string> out;
    if (!f.has("layer_types") || f.raw("layer_types")->is_null()) return out;
    const Json& t = *f.raw("layer_types");
    const std::string expected = "expected " + choices[0] + " or " + choices[1] + " per layer";
    if (!t.is_array() || static_cast<int64_t>(t.size()) != layers)
        f.fail("layer_types", expected + ", " + std::to_string(layers) + " in all (num_hidden_layers)");
    for (const auto& v : t) {
        if (!v.is_string() || (v.get<std::string>() != choices[0] && v.get<std::string>() != choices[1]))
            f.fail("layer_types", expected + ", got " + v.dump());
        out.push_back(v.get<std::string>());
    }
    return out;
}

bool sparse_block(const Fields& f, QwenFfn ffn, const std::vector<int64_t>& mlp_only, int64_t i) {
    if (ffn != QwenFfn::next) return ffn == QwenFfn::sparse;
    for (const int64_t j : mlp_only)
        if (j == i) return false;
    return opt_int(f, {"num_experts"}, kQwen3Next.experts) > 0 && (i + 1) % opt_int(f, {"decoder_sparse_step"}, 1, 1) == 0;
}

// The blocks' mixers: layer_types, or every full_attention_interval-th block attention (Qwen3NextConfig.__post_init__:
// "linear_attention" if (i + 1) % full_attention_interval else "full_attention").
std::vector<bool> attention_blocks(const Fields& f, int64_t layers) {
    std::vector<bool> out;
    const std::vector<std::string> types = typed_layers(f, layers, {"linear_attention", "full_attention"});
    if (types.empty()) {
        const int64_t interval = opt_int(f, {"full_attention_interval"}, 4, 1);
        for (int64_t i = 0; i < layers; ++i) out.push_back((i + 1) % interval == 0);
        return out;
    }
    for (const auto& t : types) out.push_back(t == "full_attention");
    return out;
}

// The Qwen hybrid text model (Qwen3NextModel, Qwen3_5TextModel): embed_tokens, blocks of input_layernorm, a mixer
// (Gated DeltaNet or gated attention), post_attention_layernorm and an FFN, the final norm; lm_head untied unless
// tie_word_embeddings. Multi-token-prediction layers (mtp.*, mtp_num_hidden_layers) are not loaded by transformers
// (_keys_to_ignore_on_load_unexpected = [r"^mtp.*"]): not counted.
ModelSpec read_qwen_hybrid(const Fields& f, const QwenHybridDefaults& d, QwenFfn ffn) {
    ModelSpec m;
    m.hidden = opt_int(f, {"hidden_size"}, d.hidden, 1);
    m.vocab = opt_int(f, {"vocab_size"}, d.vocab, 1);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 32768);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    m.activation = f.get_string("hidden_act").value_or("silu");
    const int64_t layers = opt_int(f, {"num_hidden_layers"}, d.layers, 1, kMaxLayers);
    const std::vector<bool> attention = attention_blocks(f, layers);
    const std::vector<int64_t> mlp_only = ffn == QwenFfn::next ? layer_list(f, "mlp_only_layers") : std::vector<int64_t>{};
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec l = base_layer(m.hidden, 0, 0, 0, 0);
        if (attention[size_t(i)]) set_gated_attention(f, l, d);
        else l = gated_deltanet_block(f, m.hidden);
        l.ffn_kind = FfnKind::gated;
        if (sparse_block(f, ffn, mlp_only, i)) set_sparse_ffn(f, l, d);
        else l.ffn_intermediate = opt_int(f, {"intermediate_size"}, d.intermediate, 1);
        m.layers.push_back(l);
    }
    return m;
}

// qwen3_5 / qwen3_5_moe (Qwen3_5ForConditionalGeneration, Qwen3_5MoeForConditionalGeneration): the text model from
// text_config and Qwen3_5VisionModel, which is Qwen3VLVisionModel without deepstack mergers (Qwen3_5VisionConfig
// removes deepstack_visual_indexes; the MoE one defaults it to none). tie_word_embeddings is the outer config's.
ModelSpec read_qwen3_5_composite(const Fields& f, const QwenHybridDefaults& d, QwenFfn ffn) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    ModelSpec m = read_qwen_hybrid(f.child("text_config"), d, ffn);
    if (f.has("tie_word_embeddings")) m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    const EncoderSpec e = qwen3_vl_vision_tower(f.child("vision_config"));
    m.encoder = e;
    m.vision_params = e.params + e.projector_params;
    return m;
}

// Lfm2MLP's width (modeling_lfm2.py, transformers 02f41779): with block_auto_adjust_ff_dim, int(2 ff / 3), times
// block_ffn_dim_multiplier (int), rounded up to block_multiple_of.
int64_t lfm2_ff_dim(const Fields& f) {
    const char* key = f.has("block_ff_dim") ? "block_ff_dim" : "intermediate_size";
    int64_t ff = opt_int(f, {key}, 12288, 1);   // Lfm2Config: intermediate_size = kwargs.get("block_ff_dim", ...)
    if (!opt_bool(f, "block_auto_adjust_ff_dim", true)) return ff;
    ff = 2 * ff / 3;
    if (!f.has("block_ffn_dim_multiplier") || !f.raw("block_ffn_dim_multiplier")->is_null())
        ff = int64_t(f.get_number("block_ffn_dim_multiplier", 1e-6, 1e6).value_or(1.0) * double(ff));
    const int64_t multiple = opt_int(f, {"block_multiple_of"}, 256, 1);
    return multiple * ((ff + multiple - 1) / multiple);
}

// Which LFM2 blocks attend: layer_types ("conv" or "full_attention"), else full_attn_idxs, else every block
// (Lfm2Config.__init__).
std::vector<bool> lfm2_attention_blocks(const Fields& f, int64_t layers) {
    std::vector<bool> out(size_t(layers), true);
    const std::vector<std::string> types = typed_layers(f, layers, {"conv", "full_attention"});
    if (!types.empty()) {
        for (size_t i = 0; i < types.size(); ++i) out[i] = types[i] == "full_attention";
        return out;
    }
    if (!f.has("full_attn_idxs") || f.raw("full_attn_idxs")->is_null()) return out;
    out.assign(size_t(layers), false);
    for (const int64_t i : layer_list(f, "full_attn_idxs")) {
        if (i < 0 || i >= layers)
            f.fail("full_attn_idxs", "layer " + std::to_string(i) + " is not one of the " + std::to_string(layers) + " layers");
        out[size_t(i)] = true;
    }
    return out;
}

// lfm2 (Lfm2ForCausalLM, modeling_lfm2.py, transformers 02f41779): Lfm2DecoderLayer = operator_norm, Lfm2Attention
// (q/k/v/out_proj without bias, q_layernorm and k_layernorm RMSNorm(head_dim), head_dim = hidden / heads) or
// Lfm2ShortConv (conv_dim = hidden channels, conv_L_cache taps, conv_bias on in_proj, conv and out_proj), ffn_norm and
// Lfm2MLP (w1, w3, w2, SwiGLU); embedding_norm after the last block; the head tied unless tie_embedding /
// tie_word_embeddings is false. Defaults: Lfm2Config (configuration_lfm2.py, commit 05cd1ec1).
ModelSpec read_lfm2(const Fields& f) {
    ModelSpec m;
    m.hidden = opt_int(f, {"hidden_size"}, 2560, 1);
    m.vocab = opt_int(f, {"vocab_size"}, 65536, 1);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 128000);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(f, f.has("tie_embedding") ? "tie_embedding" : "tie_word_embeddings", true);
    m.activation = "silu";
    for (const char* key : {"conv_dim", "conv_dim_out", "block_dim"})
        if (f.has(key) && opt_int(f, {key}, m.hidden, 1) != m.hidden)
            f.fail(key, "expected hidden_size (" + std::to_string(m.hidden) + "): Lfm2ShortConv and Lfm2MLP run at that width");
    const int64_t layers = opt_int(f, {"num_hidden_layers"}, 32, 1, kMaxLayers);
    const int64_t heads = opt_int(f, {"num_attention_heads"}, 32, 1);
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, 8, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    const int64_t ff = lfm2_ff_dim(f);
    const bool bias = opt_bool(f, "conv_bias", false);
    const std::vector<bool> attention = lfm2_attention_blocks(f, layers);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec l = base_layer(m.hidden, 0, 0, 0, ff);
        l.ffn_kind = FfnKind::gated;
        if (attention[size_t(i)]) {
            l.heads = heads;
            l.kv_heads = kv;
            l.head_dim = m.hidden / heads;
            l.qk_norm = true;
            l.qk_norm_params = 2 * l.head_dim;
        } else {
            l.ssm = SsmKind::short_conv;
            l.ssm_inner = m.hidden;
            l.ssm_conv = opt_int(f, {"conv_L_cache"}, 3, 1);
            l.ssm_conv_bias = l.ssm_proj_bias = bias;
        }
        m.layers.push_back(l);
    }
    return m;
}

// ---- kimi_linear ------------------------------------------------------------------------------------------------

// KimiLinearConfig's defaults (transformers configuration_kimi_linear.py, commit 0bc4dd0d; they are
// Kimi-Linear-48B-A3B's): 27 layers of 2304, 163,840 tokens, 256 experts of 1024 (top 8, 1 shared), the first layer
// dense (first_k_dense_replace 1, intermediate_size 9216), 1,048,576 positions, untied.
constexpr int64_t kKimiLayers = 27, kKimiHidden = 2304, kKimiVocab = 163840, kKimiExperts = 256;

// Which blocks are KDA (linear_attn_config.kda_layers) and which MLA (full_attn_layers): 1-based lists that together
// name every layer once (KimiLinearConfig.__post_init__: layer_types[layer - 1]; vLLM's is_kda_layer reads
// (layer_idx + 1) in kda_layers).
std::vector<bool> kimi_kda_blocks(const Fields& lin, int64_t layers) {
    for (const char* key : {"kda_layers", "full_attn_layers"})
        if (!lin.has(key)) lin.fail(key, "missing (1-based layer lists: kda_layers and full_attn_layers)");
    std::vector<int> seen(size_t(layers), 0);
    std::vector<bool> kda(size_t(layers), false);
    for (const char* key : {"kda_layers", "full_attn_layers"})
        for (const int64_t i : layer_list(lin, key)) {
            if (i < 1 || i > layers)
                lin.fail(key, "layer " + std::to_string(i) + " is not one of 1.." + std::to_string(layers) +
                                  " (1-based, num_hidden_layers)");
            if (seen[size_t(i - 1)]++) lin.fail(key, "layer " + std::to_string(i) + " is listed twice");
            kda[size_t(i - 1)] = std::string(key) == "kda_layers";
        }
    for (int64_t i = 0; i < layers; ++i)
        if (!seen[size_t(i)])
            lin.fail("kda_layers", "layer " + std::to_string(i + 1) + " is in neither kda_layers nor full_attn_layers");
    return kda;
}

// Kimi Delta Attention (vLLM model_executor/layers/kda.py KimiDeltaAttention, commit 01a7e5d9): num_heads heads of
// head_dim for q, k and v alike, short convolutions of short_conv_kernel_size taps, low-rank decay and output gates of
// rank head_dim, o_norm over one head. A full-rank output gate (use_full_rank_gate: g_proj [hidden -> heads x
// head_dim]) is not modelled.
LayerSpec kda_block(const Fields& lin, int64_t hidden) {
    if (opt_bool(lin, "use_full_rank_gate", false))
        lin.fail("use_full_rank_gate", "a full-rank output gate (g_proj) is not modelled; expected false");
    const int64_t heads = opt_int(lin, {"num_heads"}, 32, 1);   // KimiLinearConfig linear_num_heads
    const int64_t dim = opt_int(lin, {"head_dim"}, 128, 1);     // linear_head_dim
    const int64_t kernel = opt_int(lin, {"short_conv_kernel_size"}, 4, 1);   // linear_conv_kernel_dim
    if (double(heads) * double(dim) * (double(hidden) + double(dim) + double(kernel)) > 1e15)
        lin.fail("num_heads", "the KDA shapes describe more than 10^15 parameters");
    LayerSpec l = base_layer(hidden, 0, 0, 0, 0);
    l.ssm = SsmKind::kda;
    l.ssm_groups = l.ssm_heads = heads;
    l.ssm_state = dim;
    l.ssm_inner = heads * dim;
    l.ssm_conv = kernel;
    l.ssm_chunk = 64;        // fla chunk_kda's chunk, as chunk_gated_delta_rule's
    l.ssm_gated_norm = true;
    return l;
}

// Kimi K3's extensions of the same config class, which change the modules: refused rather than miscounted.
void refuse_kimi_extensions(const Fields& f) {
    if (opt_bool(f, "mla_use_output_gate", false))
        f.fail("mla_use_output_gate", "the MLA output gate is not modelled; expected false");
    if (opt_int(f, {"attn_res_block_size"}, 0) > 0)
        f.fail("attn_res_block_size", "block attention residuals are not modelled; expected 0");
    for (const char* key : {"routed_expert_hidden_size", "dense_ffn_hidden"})
        if (f.has(key) && !f.raw(key)->is_null()) f.fail(key, "not modelled (Kimi K3's latent experts); leave it out");
    for (const char* key : {"num_nextn_predict_layers", "num_mtp_layers"})
        if (opt_int(f, {key}, 0) > 0) f.fail(key, "multi-token-prediction layers are not modelled; expected 0");
}

// kimi_linear (KimiLinearForCausalLM; vLLM model_executor/models/kimi_linear.py, commit 01d99586): embed_tokens,
// blocks of input_layernorm, KDA or MLA (KimiMLAAttention: DeepseekV3Attention's modules), post_attention_layernorm
// and an FFN, the final norm, an untied lm_head. Layers below first_k_dense_replace, and those off moe_layer_freq,
// hold a dense MLP of intermediate_size; the others KimiMoE: a gate nn.Linear(hidden, num_experts) with
// e_score_correction_bias, num_experts experts of moe_intermediate_size, num_shared_experts shared experts in one MLP.
ModelSpec read_kimi_linear(const Fields& f) {
    if (!f.has("linear_attn_config")) f.fail("linear_attn_config", "missing (the KDA layers' shapes and layer lists)");
    refuse_kimi_extensions(f);
    const Fields lin = f.child("linear_attn_config");
    ModelSpec m;
    m.hidden = opt_int(f, {"hidden_size"}, kKimiHidden, 1);
    m.vocab = opt_int(f, {"vocab_size"}, kKimiVocab, 1);
    m.max_positions = opt_int(f, {"max_position_embeddings", "model_max_length"}, 1048576);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    m.activation = f.get_string("hidden_act").value_or("silu");
    const int64_t layers = opt_int(f, {"num_hidden_layers"}, kKimiLayers, 1, kMaxLayers);
    const std::vector<bool> kda = kimi_kda_blocks(lin, layers);
    const LayerSpec mla = mla_attention_layer(f, m.hidden);
    const LayerSpec delta = kda_block(lin, m.hidden);
    const int64_t experts = opt_int(f, {"num_experts", "n_routed_experts"}, kKimiExperts);
    const int64_t width = opt_int(f, {"moe_intermediate_size"}, 1024, 1);
    if (double(experts) * 3 * double(m.hidden) * double(width) > 1e15)
        f.fail("num_experts", "the experts describe more than 10^15 parameters");
    const int64_t top_k = opt_int(f, {"num_experts_per_token", "num_experts_per_tok"}, 8, 1);
    if (experts > 0 && top_k > experts)
        f.fail("num_experts_per_token", std::to_string(top_k) + " experts per token of " + std::to_string(experts));
    const int64_t shared = opt_int(f, {"num_shared_experts", "n_shared_experts"}, 1);
    if (double(shared) * 3 * double(m.hidden) * double(width) > 1e15)
        f.fail("num_shared_experts", "the shared experts describe more than 10^15 parameters");
    const int64_t first_dense = opt_int(f, {"first_k_dense_replace"}, 1);
    const int64_t freq = opt_int(f, {"moe_layer_freq"}, 1, 1);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec l = kda[size_t(i)] ? delta : mla;
        l.ffn_kind = FfnKind::gated;
        l.ffn_intermediate = mla.ffn_intermediate;   // intermediate_size
        if (experts > 0 && i >= first_dense && i % freq == 0) {
            l.experts = experts;
            l.experts_per_token = top_k;
            l.ffn_intermediate = width;
            l.shared_expert_intermediate = width * shared;
            l.router_bias = true;
        }
        m.layers.push_back(l);
    }
    return m;
}

}  // namespace

const std::vector<FamilyReader>& linear_families() {
    static const std::vector<FamilyReader> families = {
        {"qwen3_next", [](const Fields& f) { return read_qwen_hybrid(f, kQwen3Next, QwenFfn::next); }},
        {"qwen3_5", [](const Fields& f) { return read_qwen3_5_composite(f, kQwen3_5, QwenFfn::dense); }},
        {"qwen3_5_moe", [](const Fields& f) { return read_qwen3_5_composite(f, kQwen3_5Moe, QwenFfn::sparse); }},
        {"qwen3_5_text", [](const Fields& f) { return read_qwen_hybrid(f, kQwen3_5, QwenFfn::dense); }},
        {"qwen3_5_moe_text", [](const Fields& f) { return read_qwen_hybrid(f, kQwen3_5Moe, QwenFfn::sparse); }},
        {"lfm2", read_lfm2},
        {"kimi_linear", read_kimi_linear},
    };
    return families;
}

}  // namespace ftb::hf
