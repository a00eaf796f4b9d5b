// Family readers. Field names and defaults follow each family's transformers configuration class
// (transformers/models/<family>/configuration_<family>.py) and module layout (modeling_<family>.py).
#include "spec/hf_config.hpp"

#include <algorithm>

#include "ftbound/error.hpp"

namespace ftb {
namespace {

// Shape fields are required; this reads one, accepting the family's aliases in order.
// Upper bounds on shapes: far beyond any real model, small enough that exact counts cannot overflow int64.
constexpr int64_t kMaxDim = int64_t(1) << 24;      // widths, vocabularies
constexpr int64_t kMaxLayers = 100000;

int64_t need_int(const Fields& f, std::initializer_list<const char*> keys, int64_t min = 1, int64_t max = kMaxDim) {
    for (const char* k : keys)
        if (f.has(k)) return *f.get_int(k, min, max);
    std::string list;
    for (const char* k : keys) list += (list.empty() ? "" : " or ") + std::string(k);
    f.fail(*keys.begin(), std::string("missing (required for the ") + "cost model; give " + list + ")");
}

int64_t opt_int(const Fields& f, std::initializer_list<const char*> keys, int64_t dflt, int64_t min = 0,
                int64_t max = kMaxDim) {
    for (const char* k : keys)
        if (f.has(k)) return *f.get_int(k, min, max);
    return dflt;
}

bool opt_bool(const Fields& f, const char* key, bool dflt) { return f.get_bool(key).value_or(dflt); }

void check_divisible(const Fields& f, const char* key, int64_t hidden, int64_t heads) {
    if (hidden % heads != 0)
        f.fail(key, "hidden size " + std::to_string(hidden) + " is not divisible by " + std::to_string(heads) +
                        " heads; give head_dim");
}

LayerSpec base_layer(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t ffn) {
    LayerSpec l;
    l.hidden = hidden;
    l.heads = heads;
    l.kv_heads = kv_heads;
    l.head_dim = head_dim;
    l.ffn_intermediate = ffn;
    return l;
}

void check_kv(const Fields& f, const char* key, int64_t heads, int64_t kv) {
    if (kv > heads || heads % kv != 0)
        f.fail(key, std::to_string(kv) + " key/value heads do not divide " + std::to_string(heads) + " attention heads");
}

// llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, gemma, gemma2, phi3: the Llama layout with variations.
ModelSpec read_llama_like(const Fields& f, const std::string& type) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    int64_t head_dim;
    if (f.has("head_dim")) head_dim = *f.get_int("head_dim", 1, 1 << 20);
    else {
        check_divisible(f, "num_attention_heads", m.hidden, heads);
        head_dim = m.hidden / heads;
    }
    const int64_t ffn = type == "mixtral" ? need_int(f, {"intermediate_size"})
                                          : (type == "qwen2_moe" ? opt_int(f, {"intermediate_size"}, 5632, 1)
                                                                 : need_int(f, {"intermediate_size"}));
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 2048);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    // Tied embeddings: gemma/gemma2 always tie (GemmaForCausalLM); the rest default per class (False).
    const bool tie_default = type == "gemma" || type == "gemma2";
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", tie_default);
    m.activation = f.get_string("hidden_act").value_or(type.rfind("gemma", 0) == 0 ? "gelu_pytorch_tanh" : "silu");

    LayerSpec l = base_layer(m.hidden, heads, kv, head_dim, ffn);
    l.ffn_kind = FfnKind::gated;
    // Qwen2 and Qwen2-MoE put biases on q/k/v (hard-coded in modeling_qwen2.py); llama-style classes read attention_bias.
    l.qkv_bias = (type == "qwen2" || type == "qwen2_moe") ? true : opt_bool(f, "attention_bias", false);
    l.o_bias = (type == "llama" || type == "qwen3") ? opt_bool(f, "attention_bias", false) : false;
    l.mlp_bias = type == "llama" ? opt_bool(f, "mlp_bias", false) : false;
    if (type == "qwen3") {
        l.qk_norm = true;
        l.qk_norm_params = 2 * head_dim;   // q_norm and k_norm: RMSNorm(head_dim) each
    }
    l.norms = type == "gemma2" ? 4 : 2;    // gemma2 adds pre/post feed-forward norms
    if (type == "mistral" || type == "mixtral" || type == "qwen2")
        l.sliding_window = f.has("sliding_window") ? opt_int(f, {"sliding_window"}, 0) : 0;

    if (type == "mixtral") {
        l.experts = opt_int(f, {"num_local_experts"}, 8, 1);
        l.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 2, 1);
    }
    std::vector<int64_t> mlp_only;
    int64_t sparse_step = 1;
    if (type == "qwen2_moe") {
        if (f.has("mlp_only_layers")) {
            const Json& arr = *f.raw("mlp_only_layers");
            if (!arr.is_array()) f.fail("mlp_only_layers", "expected a list of layer indices");
            for (const auto& v : arr) {
                if (!v.is_number_integer()) f.fail("mlp_only_layers", "expected a list of layer indices");
                mlp_only.push_back(v.get<int64_t>());
            }
        }
        sparse_step = opt_int(f, {"decoder_sparse_step"}, 1, 1);
    }
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        if (type == "gemma2") li.sliding_window = (i % 2 == 0) ? opt_int(f, {"sliding_window"}, 4096) : 0;
        if (type == "qwen2_moe") {
            const int64_t experts = opt_int(f, {"num_experts"}, 60);
            const bool sparse = std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() && experts > 0 &&
                                (i + 1) % sparse_step == 0;
            if (sparse) {
                li.experts = experts;
                li.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 4, 1);
                li.ffn_intermediate = opt_int(f, {"moe_intermediate_size"}, 1408, 1);
                li.shared_expert_intermediate = opt_int(f, {"shared_expert_intermediate_size"}, 5632, 0);
                li.shared_expert_gate = li.shared_expert_intermediate > 0;
            }
        }
        m.layers.push_back(li);
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

ModelSpec read_gpt2(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"n_embd", "hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"n_layer", "num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"n_head", "num_attention_heads"});
    check_divisible(f, "n_head", m.hidden, heads);
    m.max_positions = opt_int(f, {"n_positions", "max_position_embeddings"}, 1024, 1);
    m.position = PositionKind::learned;
    m.position_embedding_params = m.max_positions * m.hidden;   // wpe
    m.norm = NormKind::layernorm;
    m.final_norm_params = 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    m.activation = f.get_string("activation_function").value_or("gelu_new");
    const int64_t inner = opt_int(f, {"n_inner"}, 4 * m.hidden, 1);
    LayerSpec l = base_layer(m.hidden, heads, heads, m.hidden / heads, inner);
    l.ffn_kind = FfnKind::plain;
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
    if (t == "gpt2") {
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
        m.attention_dropout = rate(f, {"attention_dropout"}, 0.0);
    }
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
    static const std::vector<std::string> types = {"llama", "mistral", "mixtral", "qwen2",  "qwen2_moe", "qwen3",
                                                   "gemma", "gemma2",  "phi",     "phi3",   "gpt2",      "gpt_neox",
                                                   "mpt",   "falcon",  "bloom",   "stablelm", "opt",     "t5",
                                                   "mt5"};
    return types;
}

ModelSpec model_from_hf_config(const Fields& f, const std::string& name) {
    auto type = f.get_string("model_type");
    if (!type) f.fail("model_type", "missing: name the model family (one of llama, mistral, ..., t5)");
    const auto& types = supported_model_types();
    if (std::find(types.begin(), types.end(), *type) == types.end()) {
        std::string hint = did_you_mean(*type, types);
        f.fail("model_type", "unsupported family '" + *type + "'" +
                                 (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                 "; supported: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, gemma, gemma2, phi, "
                                 "phi3, gpt2, gpt_neox, mpt, falcon, bloom, stablelm, opt, t5");
    }
    ModelSpec m;
    const std::string& t = *type;
    if (t == "phi") m = read_phi(f);
    else if (t == "gpt2") m = read_gpt2(f);
    else if (t == "gpt_neox") m = read_gpt_neox(f);
    else if (t == "mpt") m = read_mpt(f);
    else if (t == "falcon") m = read_falcon(f);
    else if (t == "bloom") m = read_bloom(f);
    else if (t == "stablelm") m = read_stablelm(f);
    else if (t == "opt") m = read_opt(f);
    else if (t == "t5" || t == "mt5") m = read_t5(f);   // mT5 is the T5 architecture
    else m = read_llama_like(f, t);
    read_dropout(f, t, m);
    // Exact counts stay in int64 (shapes are bounded above); refuse models beyond any hardware anyway.
    double total = double(m.vocab) * double(m.hidden) * 2;
    for (const auto& l : m.layers) total += double(l.params());
    if (total > 1e15) f.fail("model_type", "the shapes describe more than 10^15 parameters");
    m.architecture = t;
    m.name = name;
    return m;
}

}  // namespace ftb
