// Family readers. Field names and defaults follow each family's transformers configuration class
// (transformers/models/<family>/configuration_<family>.py) and module layout (modeling_<family>.py).
#include "spec/hf_config.hpp"

#include <algorithm>
#include <array>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb {
namespace {

using hf::base_layer;
using hf::check_divisible;
using hf::check_kv;
using hf::kMaxDim;
using hf::kMaxLayers;
using hf::layer_list;
using hf::need_int;
using hf::opt_bool;
using hf::opt_int;


// Which layers attend within a sliding window. Gemma 3: `layer_types` when given, else every
// sliding_window_pattern-th layer is global (Gemma3DecoderLayer: is_sliding = (i + 1) % pattern != 0).
// Qwen2-style: only with use_sliding_window, from layer max_window_layers on (Qwen2Attention).
int64_t sliding_window_of(const Fields& f, const std::string& type, int64_t i, int64_t layers) {
    if (type == "gemma3_text") {
        const int64_t window = opt_int(f, {"sliding_window"}, 4096);
        if (f.has("layer_types")) {
            const Json& t = *f.raw("layer_types");
            if (!t.is_array() || static_cast<int64_t>(t.size()) != layers || !t[size_t(i)].is_string())
                f.fail("layer_types", "expected one of sliding_attention | full_attention per layer");
            return t[size_t(i)].get<std::string>() == "sliding_attention" ? window : 0;
        }
        return (i + 1) % opt_int(f, {"sliding_window_pattern"}, 6, 1) != 0 ? window : 0;
    }
    if (type == "gemma2") return i % 2 == 0 ? opt_int(f, {"sliding_window"}, 4096) : 0;
    if (type == "mistral" || type == "mixtral") return opt_int(f, {"sliding_window"}, 0);
    if (type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") {
        if (!opt_bool(f, "use_sliding_window", false)) return 0;
        return i >= opt_int(f, {"max_window_layers"}, layers) ? opt_int(f, {"sliding_window"}, 4096) : 0;
    }
    return 0;
}

int64_t llama_like_head_dim(const Fields& f, bool gemma3, int64_t hidden, int64_t heads) {
    if (f.has("head_dim")) return *f.get_int("head_dim", 1, 1 << 20);
    if (gemma3) return 256;
    check_divisible(f, "num_attention_heads", hidden, heads);
    return hidden / heads;
}

// The decoder layer every llama-like model repeats: biases, q/k norms and norm count by model type.
LayerSpec llama_like_layer(const Fields& f, const std::string& type, int64_t hidden, int64_t heads, int64_t kv,
                           int64_t head_dim, int64_t ffn) {
    const bool gemma3 = type == "gemma3_text";
    LayerSpec l = base_layer(hidden, heads, kv, head_dim, ffn);
    l.ffn_kind = FfnKind::gated;
    // Qwen2 and Qwen2-MoE put biases on q/k/v (hard-coded in modeling_qwen2.py); llama-style classes read attention_bias.
    l.qkv_bias = (type == "qwen2" || type == "qwen2_moe") ? true : opt_bool(f, "attention_bias", false);
    const bool qk_normed = type == "qwen3" || type == "qwen3_moe" || gemma3;
    l.o_bias = (type == "llama" || qk_normed) ? opt_bool(f, "attention_bias", false) : false;
    if (gemma3) l.qkv_bias = opt_bool(f, "attention_bias", false);
    l.mlp_bias = type == "llama" ? opt_bool(f, "mlp_bias", false) : false;
    if (qk_normed) {
        l.qk_norm = true;
        l.qk_norm_params = 2 * head_dim;   // q_norm and k_norm: RMSNorm(head_dim) each
    }
    l.norms = (type == "gemma2" || gemma3) ? 4 : 2;    // pre/post attention and pre/post feed-forward norms
    if (type == "mixtral") {
        l.experts = opt_int(f, {"num_local_experts"}, 8, 1);
        l.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 2, 1);
    }
    return l;
}

// Qwen MoE: a sparse block wherever the layer is not listed in mlp_only_layers and (i + 1) is a multiple
// of decoder_sparse_step (Qwen2MoeDecoderLayer, Qwen3MoeDecoderLayer). Defaults per config class.
void make_qwen_moe_layer(const Fields& f, const std::string& type, const std::vector<int64_t>& mlp_only, int64_t i,
                         LayerSpec& li) {
    const bool v2 = type == "qwen2_moe";
    const int64_t sparse_step = opt_int(f, {"decoder_sparse_step"}, 1, 1);
    const int64_t experts = opt_int(f, {"num_experts"}, v2 ? 60 : 128);
    const bool sparse = std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() && experts > 0 &&
                        (i + 1) % sparse_step == 0;
    if (!sparse) return;
    li.experts = experts;
    li.experts_per_token = opt_int(f, {"num_experts_per_tok"}, v2 ? 4 : 8, 1);
    li.ffn_intermediate = opt_int(f, {"moe_intermediate_size"}, v2 ? 1408 : 768, 1);
    if (v2) li.shared_expert_intermediate = opt_int(f, {"shared_expert_intermediate_size"}, 5632, 0);
    li.shared_expert_gate = li.shared_expert_intermediate > 0;
}

// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3_text, phi3: the Llama
// layout with variations.
ModelSpec read_llama_like(const Fields& f, const std::string& type) {
    ModelSpec m;
    const bool gemma3 = type == "gemma3_text";
    m.hidden = need_int(f, {"hidden_size"});
    // Gemma3TextConfig defaults (transformers configuration_gemma3.py): the published Gemma 3 config.json files
    // leave vocabulary, heads and head_dim at them.
    m.vocab = gemma3 ? opt_int(f, {"vocab_size"}, 262208, 1) : need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = gemma3 ? opt_int(f, {"num_attention_heads"}, 8, 1) : need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, gemma3 ? 4 : heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    const int64_t head_dim = llama_like_head_dim(f, gemma3, m.hidden, heads);
    const int64_t ffn = type == "mixtral" ? need_int(f, {"intermediate_size"})
                                          : (type == "qwen2_moe" ? opt_int(f, {"intermediate_size"}, 5632, 1)
                                                                 : need_int(f, {"intermediate_size"}));
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    // Tied embeddings: gemma, gemma2, gemma3 tie (their config classes default to True); the rest default to False.
    const bool tie_default = type.rfind("gemma", 0) == 0;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", tie_default);
    m.activation = f.get_string("hidden_act").value_or(type.rfind("gemma", 0) == 0 ? "gelu_pytorch_tanh" : "silu");

    const LayerSpec l = llama_like_layer(f, type, m.hidden, heads, kv, head_dim, ffn);
    const bool qwen_moe = type == "qwen2_moe" || type == "qwen3_moe";
    const std::vector<int64_t> mlp_only = qwen_moe ? layer_list(f, "mlp_only_layers") : std::vector<int64_t>{};
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        li.sliding_window = sliding_window_of(f, type, i, layers);
        if (qwen_moe) make_qwen_moe_layer(f, type, mlp_only, i, li);
        m.layers.push_back(li);
    }
    return m;
}

// Checkpoints whose model class is a llama-like one (the `base` reader) plus multi-token-prediction (MTP) layers that
// it builds and loads but its forward never runs (ModelSpec::idle_layers): one row per model_type.
struct UnrunMtpFamily {
    const char* model_type;
    const char* base;                  // read_llama_like's model type for the decoder
    const char* layers_key;            // how many MTP layers
    int64_t layers_default;
    const char* input_linear;          // each MTP layer's projection of [hidden state; embedding], 2 hidden -> hidden
    int norms;                         // each MTP layer's RMSNorm(hidden)s outside its decoder block
};

// MiMo (XiaomiMiMo's remote modeling_mimo.py, loaded with trust_remote_code, as quoted at the top of modeling_mimo.py
// in a XiaomiMiMo/MiMo snapshot, 051d98d0; the same modules in vllm-project/vllm model_executor/models/mimo_mtp.py
// MiMoMultiTokenPredictorLayer and NVIDIA-NeMo/Megatron-Bridge models/mimo/mimo_bridge.py's weight map):
// MiMoConfig(Qwen2Config) adds num_nextn_predict_layers (default 0); MiMoModel(Qwen2Model) adds mtp_layers, that many
// MiMoMTPLayers of token_layernorm and hidden_layernorm (RMSNorm(hidden)), input_proj nn.Linear(2 hidden, hidden,
// bias=False), a Qwen2 decoder layer (input_layernorm, Qwen2Attention, post_attention_layernorm, Qwen2MLP) and
// final_layernorm. MiMoForCausalLM(Qwen2ForCausalLM) defines no forward of its own: Qwen2ForCausalLM.forward calls
// Qwen2Model.forward, which runs embed_tokens, self.layers[:num_hidden_layers] and norm (transformers
// models/qwen2/modeling_qwen2.py), never mtp_layers; only inference engines run them, for speculative decoding.
constexpr UnrunMtpFamily kUnrunMtp[] = {
    {"mimo", "qwen2", "num_nextn_predict_layers", 0, "input_proj", 3},
};

ModelSpec read_unrun_mtp(const Fields& f, const UnrunMtpFamily& t) {
    ModelSpec m = read_llama_like(f, t.base);
    const int64_t mtp_layers = opt_int(f, {t.layers_key}, t.layers_default, 0, kMaxLayers);
    LayerSpec block = m.layers.back();
    block.sliding_window = 0;   // never runs: no attention pattern to cost
    for (int64_t i = 0; i < mtp_layers; ++i) {
        m.idle_layers.push_back(block);
        m.idle_linears.push_back({t.input_linear, 2 * m.hidden, m.hidden});
        m.idle_norm_params += t.norms * m.hidden;
    }
    return m;
}

// SiglipVisionModel (transformers modeling_siglip.py) as Gemma 3 uses it: patch embedding (Conv2d with bias),
// learned positions ((image/patch)^2), blocks of q/k/v/o and fc1/fc2 with biases and two LayerNorms with bias,
// post_layernorm; the attention-pooling head only with vision_use_head.
int64_t siglip_vision_params(const Fields& v) {
    const int64_t h = opt_int(v, {"hidden_size"}, 768, 1);
    const int64_t inter = opt_int(v, {"intermediate_size"}, 3072, 1);
    const int64_t layers = opt_int(v, {"num_hidden_layers"}, 12, 1, kMaxLayers);
    const int64_t image = opt_int(v, {"image_size"}, 224, 1);
    const int64_t patch = opt_int(v, {"patch_size"}, 16, 1);
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    if (image % patch != 0) v.fail("patch_size", "does not divide image_size " + std::to_string(image));
    const int64_t positions = (image / patch) * (image / patch);
    const int64_t mlp = h * inter + inter + inter * h + h;
    const int64_t block = 4 * (h * h + h) + mlp + 2 * 2 * h;
    int64_t p = channels * patch * patch * h + h + positions * h + layers * block + 2 * h;
    // SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention (in_proj 3h x h + 3h, out_proj), LayerNorm, MLP.
    if (opt_bool(v, "vision_use_head", true)) p += h + 3 * h * h + 3 * h + h * h + h + 2 * h + mlp;
    return p;
}

// gemma3 (Gemma3ForConditionalGeneration): the text model from text_config, plus the SigLIP vision tower and
// Gemma3MultiModalProjector (mm_input_projection_weight [vision hidden x text hidden], mm_soft_emb_norm
// RMSNorm(vision hidden)), which fine-tuning holds in memory as frozen or trained weights.
ModelSpec read_gemma3(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    ModelSpec m = read_llama_like(f.child("text_config"), "gemma3_text");
    if (f.has("vision_config")) {
        Fields v = f.child("vision_config");
        const int64_t vh = opt_int(v, {"hidden_size"}, 768, 1);
        m.encoder.modality = "vision";
        m.encoder.kind = "siglip";
        m.encoder.params = siglip_vision_params(v);
        m.encoder.projector_params = vh * m.hidden + vh;
        m.encoder.layers = opt_int(v, {"num_hidden_layers"}, 12, 1, kMaxLayers);
        m.encoder.hidden = vh;
        m.vision_params = m.encoder.params + m.encoder.projector_params;
    }
    return m;
}

ModelSpec read_phi(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    const int64_t hd = m.hidden / heads;
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048);
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;     // final_layernorm with bias
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    m.lm_head_bias = true;                  // PhiForCausalLM: lm_head = Linear(hidden, vocab, bias=True)
    m.activation = f.get_string("hidden_act").value_or("gelu_new");
    LayerSpec l = base_layer(m.hidden, heads, kv, hd, need_int(f, {"intermediate_size"}));
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = true;
    l.norms = 1;                            // one input_layernorm feeds attention and MLP in parallel
    l.norm_bias = true;
    l.parallel_attn_mlp = true;
    if (opt_bool(f, "qk_layernorm", false)) {
        l.qk_norm = true;
        l.qk_norm_params = 2 * 2 * hd;      // q_layernorm, k_layernorm: LayerNorm(head_dim) with bias
    }
    m.layers.assign(layers, l);
    return m;
}

// GPT-2-layout families (Conv1D c_attn / c_proj / c_fc with biases, ln_1 / ln_2 / ln_f LayerNorms, tied wte), one
// row per model_type. btlm is Cerebras' remote code (cerebras/btlm-3b-8k-base modeling_btlm.py, BTLMConfig): GPT-2
// plus a position_embedding_type of "learned" (the wpe table) or "alibi" (AlibiPositionEmbeddingLayer: no wpe; its
// per-head slopes are a fixed nn.Parameter with requires_grad=False, never trained, so not counted), and
// activation_function "swiglu", which adds c_fc2 (n_embd -> n_inner, with bias) and multiplies c_fc by silu(c_fc2):
// the gated MLP. The muP multipliers (mup_*) scale activations only.
struct Gpt2Layout {
    const char* model_type;
    const char* position_key;   // a key choosing learned | alibi positions (nullptr: always learned)
    const char* gated_act;      // the activation_function value that selects the gated MLP (nullptr: never)
};

constexpr std::array<Gpt2Layout, 2> kGpt2Layouts = {{
    {"gpt2", nullptr, nullptr},
    {"btlm", "position_embedding_type", "swiglu"},
}};

ModelSpec read_gpt2_layout(const Fields& f, const Gpt2Layout& t) {
    ModelSpec m;
    m.hidden = need_int(f, {"n_embd", "hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"n_layer", "num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"n_head", "num_attention_heads"});
    check_divisible(f, "n_head", m.hidden, heads);
    m.max_positions = opt_int(f, {"n_positions", "max_position_embeddings"}, 1024, 1);
    const std::string position = t.position_key ? f.get_string(t.position_key).value_or("learned") : "learned";
    if (position == "alibi") {
        m.position = PositionKind::alibi;
    } else if (position == "learned") {
        m.position = PositionKind::learned;
        m.position_embedding_params = m.max_positions * m.hidden;   // wpe
    } else {
        f.fail(t.position_key, "'" + position + "' is not a position embedding " + t.model_type +
                                   " has; expected learned | alibi");
    }
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    m.activation = f.get_string("activation_function").value_or("gelu_new");
    const bool gated = t.gated_act != nullptr && m.activation == t.gated_act;
    if (gated) m.activation = "silu";
    const int64_t inner = opt_int(f, {"n_inner"}, 4 * m.hidden, 1);
    LayerSpec l = base_layer(m.hidden, heads, heads, m.hidden / heads, inner);
    l.ffn_kind = gated ? FfnKind::gated : FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = true;
    l.norm_bias = true;
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_gpt_neox(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048);
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    m.activation = f.get_string("hidden_act").value_or("gelu");
    LayerSpec l = base_layer(m.hidden, heads, heads, m.hidden / heads, need_int(f, {"intermediate_size"}));
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = opt_bool(f, "attention_bias", true);
    l.mlp_bias = true;
    l.norm_bias = true;
    l.parallel_attn_mlp = opt_bool(f, "use_parallel_residual", true);
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_mpt(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"d_model"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"n_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"n_heads"});
    check_divisible(f, "n_heads", m.hidden, heads);
    const int64_t hd = m.hidden / heads;
    const bool no_bias = opt_bool(f, "no_bias", false);
    m.max_positions = opt_int(f, {"max_seq_len"}, 2048, 1);
    int64_t kv = heads;
    bool alibi = false;
    bool qk_ln = false;
    if (f.has("attn_config")) {
        Fields a = f.child("attn_config");
        alibi = opt_bool(a, "alibi", false);
        qk_ln = opt_bool(a, "qk_ln", false);
        const std::string attn_type = a.get_string("attn_type").value_or("multihead_attention");
        if (attn_type == "multiquery_attention") kv = 1;
        else if (attn_type == "grouped_query_attention") kv = opt_int(a, {"kv_n_heads"}, heads, 1);
        check_kv(a, "kv_n_heads", heads, kv);
    }
    // MPTConfig turns learned positions off when ALiBi or RoPE is on ("alibi or rope is turned on, setting
    // learned_pos_emb to False", llm-foundry configuration_mpt.py).
    bool rope = false;
    if (f.has("attn_config")) rope = opt_bool(f.child("attn_config"), "rope", false);
    const bool learned = opt_bool(f, "learned_pos_emb", true) && !alibi && !rope;
    m.position = alibi ? PositionKind::alibi : (learned ? PositionKind::learned : PositionKind::rotary);
    if (learned) m.position_embedding_params = m.max_positions * m.hidden;
    m.norm = NormKind::layernorm;
    m.final_norm_params = no_bias ? m.hidden : 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);   // MPT reuses wte as the output head
    m.activation = "gelu";
    int64_t ffn = static_cast<int64_t>(opt_int(f, {"expansion_ratio"}, 4, 1) * m.hidden);
    if (f.has("ffn_config")) {
        Fields fc = f.child("ffn_config");
        ffn = opt_int(fc, {"ffn_hidden_size"}, ffn, 1);
    }
    LayerSpec l = base_layer(m.hidden, heads, kv, hd, ffn);
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = !no_bias;
    l.norm_bias = !no_bias;
    if (qk_ln) {
        l.qk_norm = true;
        l.qk_norm_params = (m.hidden + kv * hd) * (no_bias ? 1 : 2);   // q_ln over d_model, k_ln over kv width
    }
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_falcon(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size", "n_embed"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers", "n_layer"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads", "n_head"});
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    const int64_t hd = m.hidden / heads;
    const bool new_arch = opt_bool(f, "new_decoder_architecture", false);
    const bool multi_query = opt_bool(f, "multi_query", true);
    int64_t kv = heads;
    if (new_arch) kv = opt_int(f, {"num_kv_heads", "n_head_kv"}, heads, 1);
    else if (multi_query) kv = 1;
    check_kv(f, "num_kv_heads", heads, kv);
    const bool bias = opt_bool(f, "bias", false);
    const bool parallel = opt_bool(f, "parallel_attn", true);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048);
    m.position = opt_bool(f, "alibi", false) ? PositionKind::alibi : PositionKind::rotary;
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    m.activation = f.get_string("activation").value_or("gelu");
    LayerSpec l = base_layer(m.hidden, heads, kv, hd, opt_int(f, {"ffn_hidden_size"}, 4 * m.hidden, 1));
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = bias;
    l.norm_bias = true;
    l.parallel_attn_mlp = parallel;
    // new architecture: ln_attn + ln_mlp (num_ln_in_parallel_attn, default 2); old parallel: one input_layernorm.
    if (new_arch) l.norms = static_cast<int>(opt_int(f, {"num_ln_in_parallel_attn"}, 2, 1, 2));
    else l.norms = parallel ? 1 : 2;
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_bloom(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size", "n_embed"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"n_layer", "num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"n_head", "num_attention_heads"});
    check_divisible(f, "n_head", m.hidden, heads);
    m.max_positions = opt_int(f, {"seq_length", "max_position_embeddings"}, 2048);
    m.position = PositionKind::alibi;
    m.norm = NormKind::layernorm;
    m.embedding_norm_params = 2 * m.hidden;   // word_embeddings_layernorm
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    m.activation = "gelu";
    LayerSpec l = base_layer(m.hidden, heads, heads, m.hidden / heads, 4 * m.hidden);
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = true;
    l.norm_bias = true;
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_stablelm(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    const int64_t hd = m.hidden / heads;
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 4096);
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    m.activation = f.get_string("hidden_act").value_or("silu");
    LayerSpec l = base_layer(m.hidden, heads, kv, hd, need_int(f, {"intermediate_size"}));
    l.ffn_kind = FfnKind::gated;
    l.qkv_bias = opt_bool(f, "use_qkv_bias", false);
    l.norm_bias = true;
    l.parallel_attn_mlp = opt_bool(f, "use_parallel_residual", false);
    l.norms = l.parallel_attn_mlp ? 1 : 2;
    if (opt_bool(f, "qk_layernorm", false)) {
        l.qk_norm = true;
        l.qk_norm_params = (heads + kv) * hd;   // per-head LayerNorm(head_dim, bias=False) for q and k
    }
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_opt(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048, 1);
    m.position = PositionKind::learned;
    // OPTLearnedPositionalEmbedding keeps 2 extra rows (its padding offset).
    m.position_embedding_params = (m.max_positions + 2) * m.hidden;
    const int64_t proj = opt_int(f, {"word_embed_proj_dim"}, m.hidden, 1);
    const bool affine = opt_bool(f, "layer_norm_elementwise_affine", true);
    const bool pre_ln = opt_bool(f, "do_layer_norm_before", true);
    const bool bias = opt_bool(f, "enable_bias", true);
    m.norm = NormKind::layernorm;
    m.final_norm_params = (pre_ln && !opt_bool(f, "_remove_final_layer_norm", false) && affine) ? 2 * m.hidden : 0;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    // Token embedding and head are vocab x word_embed_proj_dim; project_in/out (no bias) bridge to hidden.
    if (proj != m.hidden) {
        m.extra_params = m.vocab * (proj - m.hidden) + 2 * proj * m.hidden;
        if (!m.tie_word_embeddings) m.extra_params += m.vocab * (proj - m.hidden);   // lm_head is vocab x proj
    }
    m.activation = f.get_string("activation_function").value_or("relu");
    LayerSpec l = base_layer(m.hidden, heads, heads, m.hidden / heads, need_int(f, {"ffn_dim"}));
    l.ffn_kind = FfnKind::plain;
    l.qkv_bias = l.o_bias = l.mlp_bias = bias;
    l.norm_bias = true;
    l.norms = affine ? 2 : 0;
    m.layers.assign(layers, l);
    return m;
}

ModelSpec read_t5(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"d_model"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t enc = need_int(f, {"num_layers"}, 1, kMaxLayers);
    const int64_t dec = opt_int(f, {"num_decoder_layers"}, enc, 0, kMaxLayers);
    const int64_t heads = need_int(f, {"num_heads"});
    const int64_t d_kv = need_int(f, {"d_kv"});
    const int64_t d_ff = need_int(f, {"d_ff"});
    const int64_t buckets = opt_int(f, {"relative_attention_num_buckets"}, 32, 1);
    const std::string ff = f.get_string("feed_forward_proj").value_or("relu");
    m.encoder_decoder = true;
    m.encoder_layers = enc;
    m.position = PositionKind::relative_buckets;
    m.max_positions = opt_int(f, {"n_positions"}, 512);
    m.norm = NormKind::rmsnorm;             // T5LayerNorm: scale only, no mean, no bias
    m.final_norm_params = m.hidden;
    m.final_norms = 2;                      // encoder.final_layer_norm + decoder.final_layer_norm
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    m.activation = ff;
    LayerSpec l = base_layer(m.hidden, heads, heads, d_kv, d_ff);
    l.ffn_kind = ff.rfind("gated-", 0) == 0 ? FfnKind::gated : FfnKind::plain;
    for (int64_t i = 0; i < enc; ++i) {
        LayerSpec e = l;
        e.is_encoder = true;
        e.norms = 2;
        if (i == 0) e.relative_attention_params = buckets * heads;
        m.layers.push_back(e);
    }
    for (int64_t i = 0; i < dec; ++i) {
        LayerSpec d = l;
        d.cross_attention = true;
        d.norms = 3;
        if (i == 0) d.relative_attention_params = buckets * heads;
        m.layers.push_back(d);
    }
    return m;
}

// Dropout rates each family's config class keeps (training mode keeps them on).
void read_dropout(const Fields& f, const std::string& t, ModelSpec& m) {
    auto rate = [&](const Fields& g, std::initializer_list<const char*> keys, double dflt) {
        for (const char* k : keys)
            if (g.has(k)) return *g.get_number(k, 0, 1);
        return dflt;
    };
    if (t == "gpt2" || t == "btlm") {   // BTLMConfig keeps GPT2Config's attn_pdrop / resid_pdrop
        m.attention_dropout = rate(f, {"attn_pdrop"}, 0.1);
        m.hidden_dropout = rate(f, {"resid_pdrop"}, 0.1);
    } else if (t == "t5" || t == "mt5") {
        m.attention_dropout = m.hidden_dropout = m.ffn_dropout = rate(f, {"dropout_rate"}, 0.1);
    } else if (t == "opt") {
        m.attention_dropout = rate(f, {"attention_dropout"}, 0.0);
        m.hidden_dropout = rate(f, {"dropout"}, 0.1);
    } else if (t == "phi") {
        m.attention_dropout = rate(f, {"attention_dropout"}, 0.0);
        m.hidden_dropout = rate(f, {"resid_pdrop"}, 0.0);
    } else if (t == "mpt") {
        if (f.has("attn_config")) m.attention_dropout = rate(f.child("attn_config"), {"attn_pdrop"}, 0.0);
        m.hidden_dropout = rate(f, {"resid_pdrop"}, 0.0);
    } else if (t == "bloom" || t == "falcon" || t == "gpt_neox" || t == "stablelm") {
        m.attention_dropout = rate(f, {"attention_dropout"}, 0.0);
        m.hidden_dropout = rate(f, {"hidden_dropout"}, 0.0);
    } else {
        m.attention_dropout = rate(f, {"attention_dropout"}, m.attention_dropout);   // the reader's family default
    }
}

}  // namespace

namespace hf {

ModelSpec llama_like(const Fields& f, const std::string& type) { return read_llama_like(f, type); }

const std::vector<FamilyReader>& core_families() {
    static const std::vector<FamilyReader> families = {
        {"llama", [](const Fields& f) { return read_llama_like(f, "llama"); }},
        {"mistral", [](const Fields& f) { return read_llama_like(f, "mistral"); }},
        {"mixtral", [](const Fields& f) { return read_llama_like(f, "mixtral"); }},
        {"qwen2", [](const Fields& f) { return read_llama_like(f, "qwen2"); }},
        {"qwen2_moe", [](const Fields& f) { return read_llama_like(f, "qwen2_moe"); }},
        {"mimo", [](const Fields& f) { return read_unrun_mtp(f, kUnrunMtp[0]); }},
        {"qwen3", [](const Fields& f) { return read_llama_like(f, "qwen3"); }},
        {"qwen3_moe", [](const Fields& f) { return read_llama_like(f, "qwen3_moe"); }},
        {"gemma", [](const Fields& f) { return read_llama_like(f, "gemma"); }},
        {"gemma2", [](const Fields& f) { return read_llama_like(f, "gemma2"); }},
        {"gemma3", read_gemma3},
        {"gemma3_text", [](const Fields& f) { return read_llama_like(f, "gemma3_text"); }},
        {"phi", read_phi},
        {"phi3", [](const Fields& f) { return read_llama_like(f, "phi3"); }},
        {"gpt2", [](const Fields& f) { return read_gpt2_layout(f, kGpt2Layouts[0]); }},
        {"btlm", [](const Fields& f) { return read_gpt2_layout(f, kGpt2Layouts[1]); }},
        {"gpt_neox", read_gpt_neox},
        {"mpt", read_mpt},
        {"falcon", read_falcon},
        {"bloom", read_bloom},
        {"stablelm", read_stablelm},
        {"opt", read_opt},
        {"t5", read_t5},
        {"mt5", read_t5},   // mT5 is the T5 architecture
    };
    return families;
}

}  // namespace hf

namespace {

// Every reader file's families, looked up by model_type.
const std::vector<hf::FamilyReader>& all_families() {
    static const std::vector<hf::FamilyReader> all = [] {
        std::vector<hf::FamilyReader> v;
        for (const auto* group :
             {&hf::core_families(), &hf::moe_families(), &hf::vlm_families(), &hf::dense_families(),
              &hf::hybrid_families(), &hf::linear_families(),
              &hf::gemma4_families()})
            v.insert(v.end(), group->begin(), group->end());
        return v;
    }();
    return all;
}

// Families ftbound knows and does not plan, with the reason (no reader could count them honestly).
// Gemma 3n (transformers models/gemma3n, modeling_gemma3n.py Gemma3nTextDecoderLayer / Gemma3nTextModel): every layer
// carries AltUp's parallel predict/correct streams (Gemma3nTextAltUp) and a Laurel low-rank residual block
// (Gemma3nTextLaurelBlock) beside attention and the MLP, and the model adds per-layer embeddings
// (embed_tokens_per_layer, per_layer_model_projection); none of these is a block ftbound's step model can cost, and the
// vision tower of Gemma3nForConditionalGeneration is timm's MobileNetV5 (TimmWrapper), whose shapes config.json does not
// state, so even its parameter count cannot come from the config.
void refuse_known_family(const Fields& f, const std::string& type) {
    if (type == "gemma3n" || type == "gemma3n_text")
        f.fail("model_type", "'" + type + "' (Gemma 3n) is not planned: its AltUp streams, Laurel blocks and "
                             "per-layer embeddings have no place in ftbound's block model" +
                                 std::string(type == "gemma3n" ? ", and its MobileNetV5 vision tower (timm) has no "
                                                                 "shapes in config.json to count"
                                                               : ""));
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
    static const std::vector<std::string> types = [] {
        std::vector<std::string> v;
        for (const auto& family : all_families()) v.emplace_back(family.model_type);
        return v;
    }();
    return types;
}

ModelSpec model_from_hf_config(const Fields& f, const std::string& name) {
    auto type = f.get_string("model_type");
    // The original Mamba checkpoints (state-spaces/mamba-*) publish mamba_ssm's MambaConfig, which has no model_type.
    if (!type && f.has("ssm_cfg") && f.has("d_model") && f.has("n_layer")) {
        ModelSpec m = hf::mamba_ssm_checkpoint(f);
        m.architecture = "mamba_ssm";
        m.name = name;
        return m;
    }
    if (!type) f.fail("model_type", "missing: name the model family (one of llama, mistral, ..., t5)");
    const auto& families = all_families();
    const auto family = std::find_if(families.begin(), families.end(),
                                     [&](const hf::FamilyReader& r) { return *type == r.model_type; });
    if (family == families.end()) {
        refuse_known_family(f, *type);
        const auto& types = supported_model_types();
        std::string hint = did_you_mean(*type, types);
        std::string list;
        for (const auto& t : types) list += (list.empty() ? "" : ", ") + t;
        f.fail("model_type", "unsupported family '" + *type + "'" +
                                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; supported: " + list);
    }
    const std::string& t = *type;
    ModelSpec m = family->read(f);
    // Composite checkpoints keep the language model's dropout in text_config.
    read_dropout(f.has("text_config") ? f.child("text_config") : f, t, m);
    // Exact counts stay in int64 (shapes are bounded above); refuse models beyond any hardware anyway.
    double total = double(m.vocab) * double(m.hidden) * 2;
    for (const auto& l : m.layers) total += double(l.params());
    for (const auto& l : m.idle_layers) total += double(l.params());
    for (const auto& x : m.idle_linears) total += double(x.in) * double(x.out);
    if (total > 1e15) f.fail("model_type", "the shapes describe more than 10^15 parameters");
    m.quantized = hf::read_quantization_config(f);
    m.architecture = t;
    m.name = name;
    return m;
}

}  // namespace ftb
