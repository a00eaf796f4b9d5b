// Dense decoder families that are the Llama layout with variations, one traits row per model_type: which config key
// puts biases on q/k/v, o and the MLP, q/k norms, the norms' kind, count and placement, a gated or plain MLP and its
// activation, a parallel attention + MLP block, the tied-head default, and which layers attend within a sliding
// window. Each row follows its transformers configuration_<family>.py defaults and modeling_<family>.py modules.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "model/activation.hpp"
#include "spec/hf_family.hpp"

namespace ftb {
namespace {

using hf::base_layer;
using hf::check_divisible;
using hf::check_kv;
using hf::kMaxLayers;
using hf::need_int;
using hf::opt_bool;
using hf::opt_int;

// A bias switched by a config key; no key: the family never has one.
struct BiasKey {
    const char* key = nullptr;
    bool dflt = false;
};

// q/k norms: none, RMSNorm(head_dim) shared by every head, or RMSNorm over all heads' width (OLMo 2/3).
enum class QkNorm { none, per_head, all_heads };

// Sliding-window layers: `layer_types` when the config lists them, else every `pattern`-th layer (i + 1) attends
// fully and the others within `window` (0 = no sliding window at all).
struct WindowRule {
    int64_t pattern = 0;
    const char* pattern_key = nullptr;   // a config key that overrides the pattern (nullptr: fixed)
    int64_t window = 0;                  // sliding_window default
};

struct DecoderTraits {
    const char* model_type;
    BiasKey qkv_bias, o_bias, mlp_bias;
    QkNorm qk_norm = QkNorm::none;
    NormKind norm = NormKind::rmsnorm;
    bool norm_bias = false;              // LayerNorm with a bias (block and final norms)
    int norms = 2;                       // per block
    bool parallel = false;               // attention and MLP read one normed input and add to the residual together
    FfnKind ffn = FfnKind::gated;
    const char* activation = "silu";     // hidden_act default
    bool tie = false;                    // tie_word_embeddings default
    int64_t head_dim = 0;                // head_dim default; 0 = hidden / heads
    bool head_dim_is_width = false;      // head_dim is always hidden / heads, whatever the config says
    int64_t max_positions = 2048;
    WindowRule window = {};
    const char* residual_dropout_key = nullptr;   // dropout on each sub-layer's output (SeedOss residual_dropout)
    double residual_dropout = 0;
    double attention_dropout = 0;                 // attention_dropout default
};

// clang-format off
constexpr std::array<DecoderTraits, 8> kDenseFamilies = {{
    // ApertusConfig: attention_bias on q/k/v/o, q_norm/k_norm RMSNorm(head_dim); ApertusMLP up_proj -> xIELU ->
    // down_proj without biases; attention_layernorm + feedforward_layernorm.
    {.model_type = "apertus", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {},
     .qk_norm = QkNorm::per_head, .ffn = FfnKind::plain, .activation = "xielu", .max_positions = 65536},
    // ArceeConfig: Llama attention; ArceeMLP up_proj -> relu2 -> down_proj with mlp_bias.
    {.model_type = "arcee", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {"mlp_bias"},
     .ffn = FfnKind::plain, .activation = "relu2", .max_positions = 4096},
    // Cohere2Config: Cohere2LayerNorm (mean-centred, weight only) as input_layernorm alone, attention and MLP in
    // parallel on it; head_dim = hidden / heads (__post_init__); tied; every 4th layer full attention
    // (sliding_window_pattern, sliding_window 4096).
    {.model_type = "cohere2", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {},
     .norm = NormKind::layernorm, .norms = 1, .parallel = true, .tie = true, .head_dim_is_width = true,
     .max_positions = 8192, .window = {4, "sliding_window_pattern", 4096}},
    // Glm4Config / GlmAttention: attention_bias (default true) on q/k/v, o_proj without; Phi3MLP gate_up_proj ->
    // silu * up -> down_proj; input, post_self_attn, post_attention and post_mlp RMSNorms; head_dim 128.
    {.model_type = "glm4", .qkv_bias = {"attention_bias", true}, .o_bias = {}, .mlp_bias = {}, .norms = 4,
     .head_dim = 128, .max_positions = 131072},
    // HunYuanDenseV1: LlamaAttention (attention_bias on q/k/v/o) + query_layernorm/key_layernorm RMSNorm(head_dim);
    // HunYuanDenseV1MLP without biases.
    {.model_type = "hunyuan_v1_dense", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {},
     .qk_norm = QkNorm::per_head},
    // NemotronConfig: attention_bias on q/k/v/o; NemotronMLP up_proj -> relu2 -> down_proj with mlp_bias;
    // NemotronLayerNorm1P (LayerNorm with weight and bias) as input and post-attention norms and the final norm.
    {.model_type = "nemotron", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {"mlp_bias"},
     .norm = NormKind::layernorm, .norm_bias = true, .ffn = FfnKind::plain, .activation = "relu2",
     .max_positions = 4096},
    // Olmo3 (Olmo2 layout): q_norm RMSNorm(heads * head_dim), k_norm RMSNorm(kv_heads * head_dim); the two block
    // norms follow attention and MLP (post_attention_layernorm, post_feedforward_layernorm); every 4th layer full
    // attention, the others within sliding_window 4096.
    {.model_type = "olmo3", .qkv_bias = {"attention_bias"}, .o_bias = {"attention_bias"}, .mlp_bias = {},
     .qk_norm = QkNorm::all_heads, .window = {4, nullptr, 4096}},
    // SeedOssConfig: attention_bias (default true) on q/k/v, attention_out_bias on o, mlp_bias on gate/up/down;
    // head_dim 128; residual_dropout after attention and MLP and attention_dropout, both 0.1 by default.
    {.model_type = "seed_oss", .qkv_bias = {"attention_bias", true}, .o_bias = {"attention_out_bias"},
     .mlp_bias = {"mlp_bias"}, .head_dim = 128, .max_positions = 524288, .residual_dropout_key = "residual_dropout",
     .residual_dropout = 0.1, .attention_dropout = 0.1},
}};
// clang-format on

bool bias(const Fields& f, const BiasKey& b) { return b.key != nullptr && opt_bool(f, b.key, b.dflt); }

int64_t head_dim_of(const Fields& f, const DecoderTraits& t, int64_t hidden, int64_t heads) {
    if (!t.head_dim_is_width && f.has("head_dim")) return *f.get_int("head_dim", 1, 1 << 20);
    if (!t.head_dim_is_width && t.head_dim > 0) return t.head_dim;
    check_divisible(f, "num_attention_heads", hidden, heads);
    return hidden / heads;
}

// The window of layer i under the family's rule; a config's `sliding_window: null` turns windows off.
int64_t window_of(const Fields& f, const WindowRule& rule, int64_t i, int64_t layers) {
    if (rule.pattern == 0 || (f.node().contains("sliding_window") && f.node().at("sliding_window").is_null()))
        return 0;
    const int64_t window = opt_int(f, {"sliding_window"}, rule.window, 1);
    if (f.has("layer_types")) {
        const Json& types = *f.raw("layer_types");
        if (!types.is_array() || static_cast<int64_t>(types.size()) != layers || !types[size_t(i)].is_string())
            f.fail("layer_types", "expected one of sliding_attention | full_attention per layer");
        return types[size_t(i)].get<std::string>() == "sliding_attention" ? window : 0;
    }
    const int64_t pattern = rule.pattern_key ? opt_int(f, {rule.pattern_key}, rule.pattern, 1) : rule.pattern;
    return (i + 1) % pattern != 0 ? window : 0;
}

LayerSpec decoder_layer(const Fields& f, const DecoderTraits& t, const ModelSpec& m, int64_t heads, int64_t kv,
                        int64_t head_dim) {
    LayerSpec l = base_layer(m.hidden, heads, kv, head_dim, need_int(f, {"intermediate_size"}));
    l.ffn_kind = t.ffn;
    l.qkv_bias = bias(f, t.qkv_bias);
    l.o_bias = bias(f, t.o_bias);
    l.mlp_bias = bias(f, t.mlp_bias);
    l.qk_norm = t.qk_norm != QkNorm::none;
    if (t.qk_norm == QkNorm::per_head) l.qk_norm_params = 2 * head_dim;
    if (t.qk_norm == QkNorm::all_heads) l.qk_norm_params = (heads + kv) * head_dim;
    l.norms = t.norms;
    l.norm_bias = t.norm_bias;
    l.parallel_attn_mlp = t.parallel;
    l.activation_params = activation_cost(m.activation).learnable_params;
    return l;
}

ModelSpec read_dense_decoder(const Fields& f, const DecoderTraits& t) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    const int64_t head_dim = head_dim_of(f, t, m.hidden, heads);
    m.max_positions = opt_int(f, {"max_position_embeddings"}, t.max_positions);
    m.position = PositionKind::rotary;
    m.norm = t.norm;
    m.final_norm_params = t.norm_bias ? 2 * m.hidden : m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", t.tie);
    m.activation = f.get_string("hidden_act").value_or(t.activation);
    // Dropout in training mode: a 1-byte mask per element of each sub-layer output; the attention probabilities'
    // rate is read after the reader (hf_config.cpp read_dropout), falling back to this default.
    if (t.residual_dropout_key)
        m.hidden_dropout = f.get_number(t.residual_dropout_key, 0, 1).value_or(t.residual_dropout);
    m.attention_dropout = t.attention_dropout;
    const LayerSpec l = decoder_layer(f, t, m, heads, kv, head_dim);
    for (int64_t i = 0; i < layers; ++i) {
        m.layers.push_back(l);
        m.layers.back().sliding_window = window_of(f, t.window, i, layers);
    }
    return m;
}

template <size_t Row>
ModelSpec read_row(const Fields& f) {
    return read_dense_decoder(f, kDenseFamilies[Row]);
}

template <size_t... Rows>
std::vector<hf::FamilyReader> readers_of(std::index_sequence<Rows...>) {
    return {hf::FamilyReader{kDenseFamilies[Rows].model_type, &read_row<Rows>}...};
}

}  // namespace

namespace hf {

const std::vector<FamilyReader>& dense_families() {
    static const std::vector<FamilyReader> families = readers_of(std::make_index_sequence<kDenseFamilies.size()>());
    return families;
}

}  // namespace hf
}  // namespace ftb
