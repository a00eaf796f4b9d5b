// Gemma 4 (transformers models/gemma4: configuration_gemma4.py, modeling_gemma4.py, commit 0246b4f3) and Gemma 4
// unified (models/gemma4_unified: configuration_gemma4_unified.py, modeling_gemma4_unified.py, commit 076c6590).
//
// Both text models are the Gemma 3 block (four RMSNorms, q/k norms, GeGLU MLP) with two layer kinds from
// `layer_types`: sliding-window layers at head_dim, and full-attention layers at global_head_dim whose keys may also
// be their values (attention_k_eq_v: Gemma4TextAttention / Gemma4UnifiedTextAttention build no v_proj there and use
// num_global_key_value_heads). Gemma 4's MoE checkpoints (enable_moe_block) run a dense MLP and 128 routed experts
// side by side in every layer (Gemma4TextDecoderLayer). Every decoder layer also holds `layer_scalar`, a persistent
// one-element buffer the checkpoint stores.
//
// What the spec cannot say, and how it is counted (docs/job-file.md says the same):
//  - k_eq_v full-attention layers are written as 2 x heads query heads of global_head_dim / 2 with
//    num_global_key_value_heads KV heads. q, k (counted as the spec's k + v) and o weights, q/k norms, attention FLOPs
//    and the query shapes are exact; the step time then runs the k projection as two GEMMs of half its width (the
//    spec's k and v: the same FLOPs, one more kernel), sizes the attention kernel for head_dim global_head_dim / 2
//    (the model's 512 is beyond FlashAttention-2, which falls back to SDPA), and keeps half the real k/v activations
//    of those layers (the real v is k normed again, a tensor of its own).
//  - layer_scalar is counted as the layer's one own scalar (LayerSpec::activation_params): held, and counted as
//    trained although it is a buffer (one value a layer).
//  - the MoE router's scale vector (hidden) is counted as one more norm of the layer and its per_expert_scale
//    (one value per expert) as the router's per-expert vector (LayerSpec::router_bias).
// Refused with an error naming the field: per-layer embeddings (hidden_size_per_layer_input), KV-shared layers
// (num_kv_shared_layers) and Gemma 4's conformer audio tower (audio_config): the on-device E2B / E4B checkpoints.
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// Fields::has is false for a null value as for a missing key; Gemma 4's configs tell them apart (a null
// hidden_size_per_layer_input is off, a missing one is Gemma4TextConfig's default of 256).
bool absent_or_null(const Fields& f, const char* key) { return !f.has(key); }
bool written(const Fields& f, const char* key) { return f.node().is_object() && f.node().contains(key); }

// The shapes of a Gemma 4 text config that decide its layers.
struct Gemma4Text {
    int64_t hidden = 0, heads = 0, kv = 0, head_dim = 0, global_head_dim = 0, global_kv = 0, ffn = 0, window = 0;
    bool k_eq_v = false, bias = false;
    int64_t experts = 0, top_k = 0, expert_ffn = 0;   // enable_moe_block (Gemma4TextConfig); 0: dense
};

// Gemma4TextConfig / Gemma4UnifiedTextConfig: the class defaults are no released checkpoint's widths, so the widths are
// required; head_dim 256 and global_head_dim 512 (popped from the kwargs in __post_init__) are every release's.
Gemma4Text gemma4_text_shape(const Fields& t, bool unified) {
    Gemma4Text s;
    s.hidden = need_int(t, {"hidden_size"});
    s.ffn = need_int(t, {"intermediate_size"});
    s.heads = need_int(t, {"num_attention_heads"});
    s.kv = need_int(t, {"num_key_value_heads"});
    check_kv(t, "num_key_value_heads", s.heads, s.kv);
    s.head_dim = opt_int(t, {"head_dim"}, 256, 1);
    s.global_head_dim = opt_int(t, {"global_head_dim"}, 512, 1);
    s.k_eq_v = opt_bool(t, "attention_k_eq_v", false);
    // num_global_key_value_heads replaces num_key_value_heads on full-attention layers only with attention_k_eq_v.
    s.global_kv = s.k_eq_v && !absent_or_null(t, "num_global_key_value_heads")
                      ? *t.get_int("num_global_key_value_heads", 1, kMaxDim)
                      : s.kv;
    check_kv(t, "num_global_key_value_heads", s.heads, s.global_kv);
    if (s.k_eq_v && s.global_head_dim % 2 != 0)
        t.fail("global_head_dim", "must be even with attention_k_eq_v (its keys are counted as two halves)");
    s.window = opt_int(t, {"sliding_window"}, unified ? 1024 : 512, 1);
    s.bias = opt_bool(t, "attention_bias", false);
    if (opt_int(t, {"num_kv_shared_layers"}, 0) > 0)
        t.fail("num_kv_shared_layers", "layers that reuse an earlier layer's keys and values (Gemma 4 E2B / E4B) are "
                                       "not a block ftbound plans; only 0 is read");
    if (!unified && opt_bool(t, "enable_moe_block", false)) {
        s.experts = need_int(t, {"num_experts"});
        s.top_k = need_int(t, {"top_k_experts"});
        if (s.top_k > s.experts) t.fail("top_k_experts", "exceeds num_experts " + std::to_string(s.experts));
        s.expert_ffn = need_int(t, {"moe_intermediate_size"});
    }
    return s;
}

// The layer kinds, from `layer_types` or Gemma4TextConfig.__post_init__'s default (every 6th layer full); the last
// layer is forced to full attention either way.
std::vector<bool> gemma4_full_layers(const Fields& t, int64_t layers) {
    const std::vector<std::string> types = layer_types(t, layers);
    std::vector<bool> full(size_t(layers), false);
    for (int64_t i = 0; i < layers; ++i) {
        if (types.empty()) {
            full[size_t(i)] = (i + 1) % 6 == 0;
            continue;
        }
        const std::string& k = types[size_t(i)];
        if (k != "sliding_attention" && k != "full_attention")
            t.fail("layer_types", "entry " + std::to_string(i) + " is '" + k +
                                      "': expected sliding_attention or full_attention");
        full[size_t(i)] = k == "full_attention";
    }
    full.back() = true;
    return full;
}

LayerSpec gemma4_layer(const Gemma4Text& s, bool full) {
    LayerSpec l;
    if (!full) {
        l = base_layer(s.hidden, s.heads, s.kv, s.head_dim, s.ffn);
        l.sliding_window = s.window;
    } else if (s.k_eq_v) {
        // No v_proj: 2h heads of gd/2 hold q [h*gd] and o exactly, and k + v of kv*gd/2 each hold k [kv*gd].
        l = base_layer(s.hidden, 2 * s.heads, s.global_kv, s.global_head_dim / 2, s.ffn);
    } else {
        l = base_layer(s.hidden, s.heads, s.global_kv, s.global_head_dim, s.ffn);
    }
    const int64_t hd = full ? s.global_head_dim : s.head_dim;
    l.ffn_kind = FfnKind::gated;
    l.qkv_bias = l.o_bias = s.bias;
    l.qk_norm = true;
    l.qk_norm_params = 2 * hd;   // q_norm and k_norm: RMSNorm(head_dim) each; v_norm has no scale
    l.norms = 4;                 // input, post_attention, pre_feedforward, post_feedforward
    l.activation_params = 1;     // layer_scalar
    if (s.experts > 0) {
        // Gemma4TextExperts (gate_up_proj [E, 2I, h], down_proj [E, h, I]) beside the dense Gemma4TextMLP, which runs
        // on every token like a shared expert; Gemma4TextRouter: proj [h -> E], scale [h], per_expert_scale [E];
        // post_feedforward_layernorm_1/_2 and pre_feedforward_layernorm_2.
        l.experts = s.experts;
        l.experts_per_token = s.top_k;
        l.ffn_intermediate = s.expert_ffn;
        l.shared_expert_intermediate = s.ffn;
        l.router_bias = true;
        l.norms = 4 + 3 + 1;
    }
    return l;
}

ModelSpec gemma4_text_model(const Fields& t, bool unified) {
    if (!unified && !absent_or_null(t, "hidden_size_per_layer_input") &&
        *t.get_int("hidden_size_per_layer_input", 0, kMaxDim) > 0)
        t.fail("hidden_size_per_layer_input", "per-layer embeddings (Gemma 4 E2B / E4B) are not a block ftbound plans; "
                                              "only 0 or null is read");
    if (!unified && !written(t, "hidden_size_per_layer_input"))
        t.fail("hidden_size_per_layer_input", "missing: Gemma4TextConfig's default, 256, turns on per-layer embeddings "
                                              "(Gemma 4 E2B / E4B), which ftbound does not plan; give 0");
    const Gemma4Text s = gemma4_text_shape(t, unified);
    const int64_t layers = need_int(t, {"num_hidden_layers"}, 1, kMaxLayers);
    ModelSpec m;
    m.hidden = s.hidden;
    m.vocab = opt_int(t, {"vocab_size"}, 262144, 1);
    m.max_positions = opt_int(t, {"max_position_embeddings"}, unified ? 262144 : 131072, 1);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(t, "tie_word_embeddings", true);
    m.activation = t.get_string("hidden_activation").value_or("gelu_pytorch_tanh");
    for (const bool full : gemma4_full_layers(t, layers)) m.layers.push_back(gemma4_layer(s, full));
    return m;
}

// Gemma4VisionModel: Gemma4VisionPatchEmbedder (input_proj [3 p^2 -> h] without bias, position_embedding_table
// [2, position_embedding_size, h]), Gemma4VisionEncoderLayer blocks (q/k/v/o Gemma4ClippableLinear without bias,
// q_norm/k_norm RMSNorm(head_dim), four RMSNorms, gated MLP; a clipped linear also stores four scalar buffers),
// std_bias and std_scale [h] with `standardize`. The projector is Gemma4MultimodalEmbedder: [h -> text hidden] without
// bias after an RMSNorm without scale.
EncoderSpec gemma4_vision(const Fields& v, int64_t text_hidden) {
    const int64_t h = opt_int(v, {"hidden_size"}, 768, 1);
    const int64_t inter = opt_int(v, {"intermediate_size"}, 3072, 1);
    const int64_t layers = opt_int(v, {"num_hidden_layers"}, 16, 1, kMaxLayers);
    const int64_t heads = opt_int(v, {"num_attention_heads"}, 12, 1);
    const int64_t kv = opt_int(v, {"num_key_value_heads"}, 12, 1);
    check_kv(v, "num_key_value_heads", heads, kv);
    const int64_t hd = opt_int(v, {"head_dim"}, 64, 1);
    const int64_t patch = opt_int(v, {"patch_size"}, 16, 1);
    const int64_t positions = opt_int(v, {"position_embedding_size"}, 10240, 1);
    const bool clipped = opt_bool(v, "use_clipped_linears", false);
    const bool bias = opt_bool(v, "attention_bias", false);
    int64_t block = 2 * h * heads * hd + 2 * h * kv * hd + 2 * hd + 4 * h + 3 * h * inter;
    if (bias) block += heads * hd + 2 * kv * hd + h;
    if (clipped) block += 7 * 4;   // input_min/max, output_min/max of q, k, v, o, gate, up, down
    EncoderSpec e;
    e.modality = "vision";
    e.kind = "gemma4_vision";
    e.params = 3 * patch * patch * h + 2 * positions * h + layers * block + (opt_bool(v, "standardize", false) ? 2 * h : 0);
    e.projector_params = h * text_hidden;
    e.layers = layers;
    e.hidden = h;
    return e;
}

void attach(ModelSpec& m, const EncoderSpec& e) {
    m.encoder = e;
    m.vision_params = e.params + e.projector_params;
}

// gemma4 (Gemma4ForConditionalGeneration): language_model from text_config, vision_tower + embed_vision from
// vision_config; the top-level tie_word_embeddings (default true) ties the head.
ModelSpec read_gemma4(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!absent_or_null(f, "audio_config"))
        f.fail("audio_config", "Gemma 4's conformer audio tower (Gemma4AudioModel, E2B / E4B) is not counted by "
                               "ftbound; only checkpoints without one (26B-A4B, 31B) are read");
    ModelSpec m = gemma4_text_model(f.child("text_config"), false);
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    if (!absent_or_null(f, "vision_config")) attach(m, gemma4_vision(f.child("vision_config"), m.hidden));
    return m;
}

// gemma4_unified (Gemma4UnifiedForConditionalGeneration) has no towers: Gemma4UnifiedVisionEmbedder (LayerNorm over
// the (patch_size * pooling_kernel_size)^2 * 3 pixels of a merged patch, Dense with bias to mm_embed_dim, LayerNorm,
// a factorized position table [mm_posemb_size, 2, mm_embed_dim], LayerNorm; all LayerNorms with bias) and, for vision
// and audio alike, Gemma4UnifiedMultimodalEmbedder ([output_proj_dims -> text hidden] without bias after an RMSNorm
// without scale). The embedders are the plan's encoder (0 blocks); both projections are its projector.
EncoderSpec gemma4_unified_embedders(const Fields& f, int64_t text_hidden) {
    EncoderSpec e;
    e.kind = "gemma4_unified_embedder";
    if (!absent_or_null(f, "vision_config")) {
        const Fields v = f.child("vision_config");
        const int64_t merged = opt_int(v, {"patch_size"}, 16, 1) * opt_int(v, {"pooling_kernel_size"}, 3, 1);
        const int64_t pixels = merged * merged * 3;
        const int64_t dim = opt_int(v, {"mm_embed_dim"}, 3840, 1);
        e.modality = "vision";
        e.hidden = dim;
        e.params = 2 * pixels + pixels * dim + dim + 2 * dim + opt_int(v, {"mm_posemb_size"}, 1120, 1) * 2 * dim + 2 * dim;
        e.projector_params += opt_int(v, {"output_proj_dims"}, 3840, 1) * text_hidden;
    }
    if (!absent_or_null(f, "audio_config")) {
        const Fields a = f.child("audio_config");
        if (e.modality.empty()) e.modality = "audio";
        e.projector_params += opt_int(a, {"audio_embed_dim", "output_proj_dims", "hidden_size"}, 640, 1) * text_hidden;
    }
    return e;
}

ModelSpec read_gemma4_unified(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    ModelSpec m = gemma4_text_model(f.child("text_config"), true);
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    const EncoderSpec e = gemma4_unified_embedders(f, m.hidden);
    if (e.present()) attach(m, e);
    return m;
}

}  // namespace

const std::vector<FamilyReader>& gemma4_families() {
    static const std::vector<FamilyReader> families = {
        {"gemma4", read_gemma4},
        {"gemma4_text", [](const Fields& f) { return gemma4_text_model(f, false); }},
        {"gemma4_unified", read_gemma4_unified},
        {"gemma4_unified_text", [](const Fields& f) { return gemma4_text_model(f, true); }},
    };
    return families;
}

}  // namespace ftb::hf
