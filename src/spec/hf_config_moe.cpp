// Mixture-of-experts families: deepseek_v2, deepseek_v3, glm4_moe_lite and mistral4 (multi-head latent attention), glm4_moe,
// minimax_m2, gpt_oss, llama4 / llama4_text, afmoe. Field names and defaults follow each family's transformers
// configuration class (transformers/models/<family>/configuration_<family>.py) and module layout
// (modeling_<family>.py).
#include <algorithm>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// Fields every family here shares: RMSNorm, rotary positions, a final norm, silu unless the config says otherwise.
ModelSpec decoder_base(const Fields& f, int64_t max_positions_default, bool tie_default) {
    ModelSpec m;
    m.hidden = need_int(f, {"hidden_size"});
    m.vocab = need_int(f, {"vocab_size"});
    m.max_positions = opt_int(f, {"max_position_embeddings"}, max_positions_default);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", tie_default);
    m.activation = f.get_string("hidden_act").value_or("silu");
    return m;
}

// Grouped-query attention with a head_dim that may differ from hidden / heads.
LayerSpec gqa_layer(const Fields& f, int64_t hidden, int64_t ffn) {
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, heads, 1);
    check_kv(f, "num_key_value_heads", heads, kv);
    int64_t head_dim = 0;
    if (f.has("head_dim") && !f.raw("head_dim")->is_null()) {
        head_dim = *f.get_int("head_dim", 1, 1 << 20);
    } else {
        check_divisible(f, "num_attention_heads", hidden, heads);
        head_dim = hidden / heads;
    }
    LayerSpec l = base_layer(hidden, heads, kv, head_dim, ffn);
    l.ffn_kind = FfnKind::gated;
    return l;
}

// Exact counts stay in int64: refuse expert banks whose product leaves it before multiplying.
void check_expert_bank(const Fields& f, const char* key, int64_t experts, int64_t hidden, int64_t width) {
    if (double(experts) * 3 * double(hidden) * double(width) > 1e15)
        f.fail(key, "the experts describe more than 10^15 parameters");
}

// The defaults of the MLA families' config classes, and whether their router keeps a per-expert correction bias.
struct MlaTraits {
    int64_t first_dense;       // first_k_dense_replace
    int64_t routed;            // n_routed_experts
    int64_t moe_width;         // moe_intermediate_size
    int64_t shared;            // n_shared_experts
    int64_t top_k;             // num_experts_per_tok (0: required)
    int64_t max_positions;     // max_position_embeddings
    bool layer_freq;           // reads moe_layer_freq (DeepseekV3DecoderLayer); V2 puts experts in every later layer
    bool correction_bias;      // gate.e_score_correction_bias
    int64_t qk_nope = 128;     // qk_nope_head_dim
};

// DeepseekV3Config: first_k_dense_replace 3, 256 routed experts of 2048, 1 shared, top 8, 4096 positions.
constexpr MlaTraits kDeepseekV3{3, 256, 2048, 1, 8, 4096, true, true};
// DeepseekV2Config (configuration_deepseek_v2.py): first_k_dense_replace 0, 64 routed experts of 1407, 2 shared,
// num_experts_per_tok None (required here), 2048 positions; DeepseekV2Moe's gate is nn.Linear(hidden, experts,
// bias=False) with no correction bias, and a layer is MoE when layer_idx >= first_k_dense_replace.
constexpr MlaTraits kDeepseekV2{0, 64, 1407, 2, 0, 2048, false, false};
// glm4_moe_lite (GLM-4.7-Flash, Glm4MoeLiteForCausalLM) has DeepSeek-V3's module layout (MLA with a q latent, a
// router with e_score_correction_bias, shared experts; lmdeploy reads it with its DeepSeek2 reader, turbomind
// glm4_moe_lite.py "same family as DeepSeek2"): its published config gives every field, DeepseekV3Config's defaults
// fill any it leaves out.
constexpr MlaTraits kGlm4MoeLite = kDeepseekV3;
// mistral4 (Mistral4ForCausalLM; transformers mistral4/modeling_mistral4.py, generated from modular_mistral4.py at
// 02075795): DeepseekV3Attention's MLA; Mistral4DecoderLayer puts Mistral4MoE in every layer from
// first_k_dense_replace on (no moe_layer_freq); its router (Mistral4TopkRouter) is a bare weight [experts, hidden],
// softmax-scored, no correction bias; gated experts (gate_up_proj, down_proj) of moe_intermediate_size and
// shared_experts of moe_intermediate_size x n_shared_experts. Mistral4Config (configuration_mistral4.py at
// 008e5743): first_k_dense_replace 0, 128 experts of 2048, 1 shared, top 4, 1,048,576 positions, qk_nope 64.
constexpr MlaTraits kMistral4{0, 128, 2048, 1, 4, 1048576, false, false, 64};

// The multi-head latent attention of DeepseekV2Attention / DeepseekV3Attention: q from a latent of q_lora_rank (null:
// a plain q_proj), k and v from a shared latent of kv_lora_rank plus a shared rope key.
LayerSpec mla_layer(const Fields& f, int64_t hidden, int64_t nope_default) {
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t nope = opt_int(f, {"qk_nope_head_dim"}, nope_default, 1);
    const int64_t rope = opt_int(f, {"qk_rope_head_dim"}, 64, 1);
    LayerSpec l = base_layer(hidden, heads, heads, nope + rope, need_int(f, {"intermediate_size"}));
    l.ffn_kind = FfnKind::gated;
    l.q_lora_rank = f.has("q_lora_rank") && !f.raw("q_lora_rank")->is_null() ? opt_int(f, {"q_lora_rank"}, 0) : 0;
    l.kv_lora_rank = need_int(f, {"kv_lora_rank"});
    l.qk_rope_head_dim = rope;
    l.v_head_dim = opt_int(f, {"v_head_dim"}, 128, 1);
    l.qkv_bias = l.o_bias = opt_bool(f, "attention_bias", false);
    const double q_in = double(l.q_lora_rank > 0 ? l.q_lora_rank : hidden);
    if (double(heads) * double(nope + rope) * q_in > 1e15 ||
        double(l.kv_lora_rank) * double(heads) * double(nope + l.v_head_dim) > 1e15 ||
        double(heads) * double(l.v_head_dim) * double(hidden) > 1e15)
        f.fail("kv_lora_rank", "the attention shapes describe more than 10^15 parameters");
    return l;
}

// deepseek_v2, deepseek_v3, glm4_moe_lite: MLA in every layer; the first first_k_dense_replace layers have a dense MLP
// of intermediate_size, the others n_routed_experts experts of moe_intermediate_size and n_shared_experts shared
// experts in one MLP. A multi-token-prediction layer (num_nextn_predict_layers) is not part of the model transformers
// builds and is not counted.
ModelSpec read_mla_moe(const Fields& f, const MlaTraits& t) {
    ModelSpec m = decoder_base(f, t.max_positions, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const LayerSpec l = mla_layer(f, m.hidden, t.qk_nope);
    const int64_t first_dense = opt_int(f, {"first_k_dense_replace"}, t.first_dense);
    const int64_t freq = t.layer_freq ? opt_int(f, {"moe_layer_freq"}, 1, 1) : 1;
    const int64_t routed = f.has("n_routed_experts") && f.raw("n_routed_experts")->is_null()
                               ? 0 : opt_int(f, {"n_routed_experts"}, t.routed);
    const int64_t width = opt_int(f, {"moe_intermediate_size"}, t.moe_width, 1);
    check_expert_bank(f, "n_routed_experts", routed, m.hidden, width);
    const int64_t shared = f.has("n_shared_experts") && f.raw("n_shared_experts")->is_null()
                               ? 0 : opt_int(f, {"n_shared_experts"}, t.shared);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        if (routed > 0 && i >= first_dense && i % freq == 0) {
            li.experts = routed;
            li.experts_per_token = t.top_k > 0 ? opt_int(f, {"num_experts_per_tok"}, t.top_k, 1)
                                               : need_int(f, {"num_experts_per_tok"});
            li.ffn_intermediate = width;
            li.shared_expert_intermediate = width * shared;
            li.router_bias = t.correction_bias;
        }
        m.layers.push_back(li);
    }
    return m;
}

// glm4_moe (Glm4MoeForCausalLM, modeling_glm4_moe.py): GQA with q/k/v biases under attention_bias (o_proj never has
// one), optional per-head q/k RMSNorms (use_qk_norm); layers from first_k_dense_replace on hold n_routed_experts
// experts of moe_intermediate_size, a router with e_score_correction_bias (Glm4MoeTopkRouter) and n_shared_experts
// shared experts in one MLP. Glm4MoeConfig defaults: 128 experts of 1408, top 8, 131,072 positions, untied.
// num_nextn_predict_layers (the MTP layer) is skipped by Glm4MoeModel (_keys_to_ignore_on_load_unexpected).
ModelSpec read_glm4_moe(const Fields& f) {
    ModelSpec m = decoder_base(f, 131072, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    LayerSpec l = gqa_layer(f, m.hidden, need_int(f, {"intermediate_size"}));
    l.qkv_bias = opt_bool(f, "attention_bias", false);
    if (opt_bool(f, "use_qk_norm", false)) {
        l.qk_norm = true;
        l.qk_norm_params = 2 * l.head_dim;
    }
    const int64_t routed = opt_int(f, {"n_routed_experts", "num_experts"}, 128);
    const int64_t width = opt_int(f, {"moe_intermediate_size"}, 1408, 1);
    check_expert_bank(f, "n_routed_experts", routed, m.hidden, width);
    const int64_t first_dense = need_int(f, {"first_k_dense_replace"}, 0, kMaxLayers);
    const int64_t shared = need_int(f, {"n_shared_experts"}, 0);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        if (routed > 0 && i >= first_dense) {
            li.experts = routed;
            li.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 8, 1);
            li.ffn_intermediate = width;
            li.shared_expert_intermediate = width * shared;
            li.router_bias = true;
        }
        m.layers.push_back(li);
    }
    return m;
}

// minimax_m2 (MiniMaxM2ForCausalLM, modeling_minimax_m2.py): GQA without biases, q_norm over all query heads and
// k_norm over all key heads (RMSNorm(heads * head_dim), RMSNorm(kv_heads * head_dim)); every layer a sparse block of
// num_local_experts experts of intermediate_size, a bias-free router and e_score_correction_bias; no shared expert.
// The MTP modules (use_mtp, num_mtp_modules) are not built by transformers and are not counted.
ModelSpec read_minimax_m2(const Fields& f) {
    ModelSpec m = decoder_base(f, 196608, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    LayerSpec l = gqa_layer(f, m.hidden, need_int(f, {"intermediate_size"}));
    l.qk_norm = true;
    l.qk_norm_params = l.q_dim() + l.kv_dim();
    l.experts = need_int(f, {"num_local_experts"});
    l.experts_per_token = need_int(f, {"num_experts_per_tok"});
    l.router_bias = true;
    check_expert_bank(f, "num_local_experts", l.experts, m.hidden, l.ffn_intermediate);
    m.layers.assign(size_t(layers), l);
    return m;
}

// gpt_oss (GptOssForCausalLM, modeling_gpt_oss.py): q/k/v/o with biases (attention_bias, default True), a learned sink
// logit per head (GptOssAttention.sinks); layer_types alternate sliding_attention (window sliding_window, 128) and
// full_attention, sliding first (GptOssConfig.__post_init__: "sliding_attention" if (i + 1) % 2); every layer
// num_local_experts experts (GptOssExperts: gate_up_proj [E, H, 2I] + gate_up_proj_bias [E, 2I], down_proj [E, I, H] +
// down_proj_bias [E, H]) behind a router with a bias (GptOssTopKRouter: weight [E, H], bias [E]). The experts' SwiGLU
// is clamped (swiglu_limit) with a sigmoid gain (swiglu_alpha): still gate, up and down per expert.
ModelSpec read_gpt_oss(const Fields& f) {
    ModelSpec m = decoder_base(f, 131072, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    LayerSpec l = gqa_layer(f, m.hidden, need_int(f, {"intermediate_size"}));
    l.qkv_bias = l.o_bias = opt_bool(f, "attention_bias", true);
    l.attention_sinks = true;
    l.experts = opt_int(f, {"num_local_experts"}, 128, 1);
    l.experts_per_token = opt_int(f, {"num_experts_per_tok", "experts_per_token"}, 4, 1);
    l.mlp_bias = true;
    l.router_bias = true;
    l.clamped_swiglu = true;
    check_expert_bank(f, "num_local_experts", l.experts, m.hidden, l.ffn_intermediate);
    const int64_t window = f.has("sliding_window") && f.raw("sliding_window")->is_null()
                               ? 0 : opt_int(f, {"sliding_window"}, 128);
    const std::vector<std::string> types = layer_types(f, layers);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        const bool sliding = types.empty() ? (i + 1) % 2 != 0 : types[size_t(i)] == "sliding_attention";
        li.sliding_window = sliding ? window : 0;
        m.layers.push_back(li);
    }
    return m;
}

// llama4_text (Llama4TextModel, modeling_llama4.py): GQA (biases under attention_bias); the layers listed in moe_layers
// (default every interleave_moe_layer_step-th: range(step - 1, layers, step), Llama4TextConfig) hold
// num_local_experts experts of intermediate_size (Llama4TextExperts gate_up_proj/down_proj), a bias-free router
// (Llama4Router) and one shared expert of intermediate_size (Llama4TextMoe.shared_expert); the others a dense MLP of
// intermediate_size_mlp. Layers that use RoPE (no_rope_layers[i] == 1; default every layer but each
// no_rope_layer_interval-th, 4) attend within chunks of attention_chunk_size (Llama4TextAttention, chunked causal
// mask); the NoPE layers attend over the whole sequence. The q/k L2 norm (use_qk_norm) has no parameters.
// A chunk of C costs a query, on average, C / 2 keys once the sequence spans whole chunks: the sliding-window
// accounting (min(seq, window) keys at causal half) gives the same figure, so the chunk is held there.
ModelSpec read_llama4_text(const Fields& f) {
    ModelSpec m = decoder_base(f, 4096 * 32, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t expert_width = need_int(f, {"intermediate_size"});
    LayerSpec l = gqa_layer(f, m.hidden, opt_int(f, {"intermediate_size_mlp"}, 16384, 1));
    l.qkv_bias = l.o_bias = opt_bool(f, "attention_bias", false);
    const int64_t experts = opt_int(f, {"num_local_experts"}, 16, 1);
    check_expert_bank(f, "num_local_experts", experts, m.hidden, expert_width);
    const int64_t step = opt_int(f, {"interleave_moe_layer_step"}, 1, 1);
    std::vector<int64_t> moe = layer_list(f, "moe_layers");
    if (!f.has("moe_layers") || f.raw("moe_layers")->is_null())
        for (int64_t i = step - 1; i < layers; i += step) moe.push_back(i);
    const std::vector<int64_t> rope = layer_list(f, "no_rope_layers");
    if (!rope.empty() && int64_t(rope.size()) != layers)
        f.fail("no_rope_layers", "expected one 0 (NoPE) or 1 (RoPE) per layer, " + std::to_string(layers) + " in all");
    const int64_t interval = opt_int(f, {"no_rope_layer_interval"}, 4, 1);
    const int64_t chunk = f.has("attention_chunk_size") && f.raw("attention_chunk_size")->is_null()
                              ? 0 : opt_int(f, {"attention_chunk_size"}, 8192);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        if (std::find(moe.begin(), moe.end(), i) != moe.end()) {
            li.experts = experts;
            li.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 1, 1);
            li.ffn_intermediate = expert_width;
            li.shared_expert_intermediate = expert_width;
        }
        const bool uses_rope = rope.empty() ? (i + 1) % interval != 0 : rope[size_t(i)] != 0;
        li.sliding_window = uses_rope ? chunk : 0;
        m.layers.push_back(li);
    }
    return m;
}

// afmoe (AfmoeForCausalLM, Arcee Trinity; modular_afmoe.py): q/k/v/o without biases (AfmoeConfig fixes
// attention_bias False), per-head q_norm/k_norm RMSNorm(head_dim), and an output gate (AfmoeAttention.gate_proj,
// hidden -> heads * head_dim, output * sigmoid(gate)); four RMSNorms per layer (input, post_attention, pre_mlp,
// post_mlp). Layers from num_dense_layers on hold num_experts experts of moe_intermediate_size, a bias-free router,
// expert_bias (an nn.Parameter of num_experts, frozen) and num_shared_experts shared experts in one MLP; the others a
// dense MLP of intermediate_size. layer_types default to sliding_attention except every global_attn_every_n_layers-th
// layer. AfmoeConfig defaults: 64 experts of 1408, top 6, 2 shared, 1 dense layer, window 1024, every 4th global.
ModelSpec read_afmoe(const Fields& f) {
    ModelSpec m = decoder_base(f, 16384, false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    LayerSpec l = gqa_layer(f, m.hidden, need_int(f, {"intermediate_size"}));
    l.qk_norm = true;
    l.qk_norm_params = 2 * l.head_dim;
    l.attention_output_gate = true;
    l.norms = 4;
    const int64_t experts = opt_int(f, {"num_experts"}, 64);
    const int64_t width = opt_int(f, {"moe_intermediate_size"}, 1408, 1);
    check_expert_bank(f, "num_experts", experts, m.hidden, width);
    const int64_t dense = opt_int(f, {"num_dense_layers"}, 1, 0, kMaxLayers);
    const int64_t shared = opt_int(f, {"num_shared_experts"}, 2);
    const int64_t window = opt_int(f, {"sliding_window"}, 1024);
    const int64_t every = opt_int(f, {"global_attn_every_n_layers"}, 4, 1);
    const std::vector<std::string> types = layer_types(f, layers);
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec li = l;
        if (experts > 0 && i >= dense) {
            li.experts = experts;
            li.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 6, 1);
            li.ffn_intermediate = width;
            li.shared_expert_intermediate = width * shared;
            li.router_bias = true;
        }
        const bool sliding = types.empty() ? (i + 1) % every != 0 : types[size_t(i)] == "sliding_attention";
        li.sliding_window = sliding ? window : 0;
        m.layers.push_back(li);
    }
    return m;
}

// Llama4VisionModel + Llama4MultiModalProjector (modeling_llama4.py): patch_embedding (Llama4UnfoldConvolution, a
// bias-free Linear of channels * patch^2 -> hidden), class_embedding, positional_embedding_vlm ((image/patch)^2 + 1
// rows), layernorm_pre and layernorm_post (LayerNorm with bias); per encoder layer q/k/v/o with biases, fc1/fc2 with
// biases (Llama4VisionMLP) and two LayerNorms; vision_adapter (Llama4VisionMLP2: fc1 intermediate_size ->
// projector_input_dim, fc2 projector_output_dim -> projector_output_dim, no biases); multi_modal_projector.linear_1
// vision_output_dim -> text hidden, no bias. The config's shapes are required: the published files give them all.
int64_t llama4_vision_params(const Fields& v, int64_t text_hidden) {
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t inter = need_int(v, {"intermediate_size"});
    const int64_t layers = need_int(v, {"num_hidden_layers"}, 0, kMaxLayers);
    const int64_t image = need_int(v, {"image_size"});
    const int64_t patch = need_int(v, {"patch_size"});
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    const int64_t proj_in = need_int(v, {"projector_input_dim"});
    const int64_t proj_out = need_int(v, {"projector_output_dim"});
    const int64_t out_dim = need_int(v, {"vision_output_dim"});
    if (image % patch != 0) v.fail("patch_size", "does not divide image_size " + std::to_string(image));
    const int64_t positions = (image / patch) * (image / patch) + 1;
    const int64_t block = 4 * (h * h + h) + (h * inter + inter) + (inter * h + h) + 2 * 2 * h;
    return channels * patch * patch * h + h + positions * h + 2 * 2 * h + layers * block + inter * proj_in +
           proj_out * proj_out + out_dim * text_hidden;
}

// llama4 (Llama4ForConditionalGeneration): the text model from text_config plus the vision tower and projector,
// which fine-tuning holds in memory as frozen or trained weights.
ModelSpec read_llama4(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    ModelSpec m = read_llama4_text(f.child("text_config"));
    if (f.has("vision_config")) m.vision_params = llama4_vision_params(f.child("vision_config"), m.hidden);
    return m;
}

}  // namespace

// Mistral4Config's q_lora_rank default (1024) is a latent query; an absent key reads as none in the DeepSeek
// families here, so mistral4 asks for it.
ModelSpec mistral4_text(const Fields& f) {
    if (!f.has("q_lora_rank"))
        f.fail("q_lora_rank", "missing (Mistral4Config's default is 1024; give it, or null for a plain q_proj)");
    return read_mla_moe(f, kMistral4);
}

// DeepseekV3Config's qk_nope_head_dim default (128) where the config leaves it out.
LayerSpec mla_attention_layer(const Fields& f, int64_t hidden) { return mla_layer(f, hidden, 128); }

std::vector<std::string> layer_types(const Fields& f, int64_t layers) {
    std::vector<std::string> out;
    if (!f.has("layer_types") || f.raw("layer_types")->is_null()) return out;
    const Json& t = *f.raw("layer_types");
    if (!t.is_array() || static_cast<int64_t>(t.size()) != layers)
        f.fail("layer_types", "expected one of sliding_attention | full_attention per layer, " +
                                  std::to_string(layers) + " in all");
    for (const auto& v : t) {
        if (!v.is_string()) f.fail("layer_types", "expected one of sliding_attention | full_attention per layer");
        out.push_back(v.get<std::string>());
    }
    return out;
}

const std::vector<FamilyReader>& moe_families() {
    static const std::vector<FamilyReader> families = {
        {"deepseek_v2", [](const Fields& f) { return read_mla_moe(f, kDeepseekV2); }},
        {"deepseek_v3", [](const Fields& f) { return read_mla_moe(f, kDeepseekV3); }},
        {"glm4_moe_lite", [](const Fields& f) { return read_mla_moe(f, kGlm4MoeLite); }},
        {"mistral4", mistral4_text},
        {"glm4_moe", read_glm4_moe},
        {"minimax_m2", read_minimax_m2},
        {"gpt_oss", read_gpt_oss},
        {"llama4", read_llama4},
        {"llama4_text", read_llama4_text},
        {"afmoe", read_afmoe},
    };
    return families;
}

}  // namespace ftb::hf
