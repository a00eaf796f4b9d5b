// State-space and hybrid families: mamba, mamba2, jamba, falcon_h1, granitemoehybrid, nemotron_h, and the original
// mamba_ssm checkpoints (MambaLMHeadModel's config.json, which names no model_type). A block's mixer is attention, a
// Mamba-1 selective scan, a Mamba-2 SSD, or attention and Mamba-2 side by side (Falcon-H1): LayerSpec::ssm and
// heads > 0. Field names and defaults follow each family's transformers configuration class; the modules follow
// modeling_<family>.py (named per reader). Shape fields whose default no checkpoint shares are required.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// The base every family here shares: RMSNorm, a final norm, no learned positions.
ModelSpec ssm_base(const Fields& f, const char* hidden_key, const char* vocab_key, bool tie_default) {
    ModelSpec m;
    m.hidden = need_int(f, {hidden_key});
    m.vocab = need_int(f, {vocab_key});
    m.max_positions = opt_int(f, {"max_position_embeddings"}, 0);
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", tie_default);
    m.activation = f.get_string("hidden_act").value_or("silu");
    return m;
}

// A block of one norm and a mixer, nothing else (Mamba's MambaBlock; Nemotron-H's NemotronHBlock).
LayerSpec mixer_block(int64_t hidden) {
    LayerSpec l = base_layer(hidden, 0, 0, 0, 0);
    l.norms = 1;
    return l;
}

// "auto" or an integer.
int64_t auto_int(const Fields& f, const char* key, int64_t auto_value) {
    if (!f.has(key) || f.raw(key)->is_null()) return auto_value;
    if (f.raw(key)->is_string()) {
        if (f.get_string(key).value_or("") != "auto") f.fail(key, "expected an integer or \"auto\"");
        return auto_value;
    }
    return *f.get_int(key, 1, kMaxDim);
}

// Mamba-1's mixer (MambaMixer): d_inner = expand * hidden (or intermediate_size), a step-size rank of
// ceil(hidden / 16) when "auto".
void set_mamba1(LayerSpec& l, int64_t inner, int64_t state, int64_t conv, int64_t dt_rank, bool conv_bias, bool proj_bias) {
    l.ssm = SsmKind::mamba1;
    l.ssm_inner = inner;
    l.ssm_state = state;
    l.ssm_conv = conv;
    l.ssm_dt_rank = dt_rank;
    l.ssm_conv_bias = conv_bias;
    l.ssm_proj_bias = proj_bias;
}

// Mamba-2's mixer (Mamba2Mixer): `heads` heads of d_inner / heads channels, `groups` groups sharing B and C.
void set_mamba2(const Fields& f, LayerSpec& l, int64_t inner, int64_t heads, int64_t groups, int64_t state, int64_t conv,
                int64_t chunk, bool conv_bias, bool proj_bias, bool gated_norm) {
    if (inner % heads != 0) f.fail("num_heads", std::to_string(heads) + " heads do not divide " + std::to_string(inner) + " channels");
    if (heads % groups != 0) f.fail("n_groups", std::to_string(groups) + " groups do not divide " + std::to_string(heads) + " heads");
    l.ssm = SsmKind::mamba2;
    l.ssm_inner = inner;
    l.ssm_heads = heads;
    l.ssm_groups = groups;
    l.ssm_state = state;
    l.ssm_conv = conv;
    l.ssm_chunk = chunk;
    l.ssm_conv_bias = conv_bias;
    l.ssm_proj_bias = proj_bias;
    l.ssm_gated_norm = gated_norm;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// mamba (MambaForCausalLM, modeling_mamba.py): MambaBlock = RMSNorm + MambaMixer, norm_f; MambaConfig defaults:
// state_size 16, expand 2, conv_kernel 4, time_step_rank "auto" (ceil(hidden / 16)), use_bias false, use_conv_bias
// true, tied embeddings.
ModelSpec read_mamba(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", true);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t expand = opt_int(f, {"expand"}, 2, 1);
    const int64_t inner = opt_int(f, {"intermediate_size"}, expand * m.hidden, 1);
    LayerSpec l = mixer_block(m.hidden);
    set_mamba1(l, inner, opt_int(f, {"state_size"}, 16, 1), opt_int(f, {"conv_kernel"}, 4, 1),
               auto_int(f, "time_step_rank", ceil_div(m.hidden, 16)), opt_bool(f, "use_conv_bias", true),
               opt_bool(f, "use_bias", false));
    m.layers.assign(size_t(layers), l);
    return m;
}

// mamba2 (Mamba2ForCausalLM, modeling_mamba2.py): Mamba2Block = RMSNorm + Mamba2Mixer (d_inner = expand * hidden,
// always a gated norm), norm_f. Mamba2Config defaults: expand 2, conv_kernel 4, n_groups 8, use_bias false,
// use_conv_bias true, chunk_size 256, untied; heads, head_dim and state_size are required here.
ModelSpec read_mamba2(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t inner = opt_int(f, {"expand"}, 2, 1) * m.hidden;
    LayerSpec l = mixer_block(m.hidden);
    set_mamba2(f, l, inner, need_int(f, {"num_heads"}), opt_int(f, {"n_groups"}, 8, 1), need_int(f, {"state_size"}),
               opt_int(f, {"conv_kernel"}, 4, 1), opt_int(f, {"chunk_size"}, 256, 1), opt_bool(f, "use_conv_bias", true),
               opt_bool(f, "use_bias", false), true);
    m.layers.assign(size_t(layers), l);
    return m;
}

// The original checkpoints (state-spaces/mamba-*): mamba_ssm models/mixer_seq_simple.py MambaLMHeadModel, config
// models/config_mamba.py MambaConfig (d_model, n_layer, vocab_size, ssm_cfg, rms_norm, pad_vocab_size_multiple; newer
// releases add d_intermediate and attn_layer_idx). The vocabulary is padded up to pad_vocab_size_multiple; the head is
// tied. ssm_cfg.layer picks Mamba1 (modules/mamba_simple.py Mamba: d_state 16, d_conv 4, expand 2, dt_rank "auto",
// conv_bias true, bias false; the same tensors as transformers' MambaMixer) or Mamba2 (modules/mamba2.py: d_state 128,
// headdim 64, ngroups 1, chunk_size 256, rmsnorm true).
ModelSpec read_mamba_ssm(const Fields& f) {
    ModelSpec m;
    m.hidden = need_int(f, {"d_model"});
    const int64_t layers = need_int(f, {"n_layer"}, 1, kMaxLayers);
    const int64_t pad = opt_int(f, {"pad_vocab_size_multiple"}, 1, 1);
    m.vocab = ceil_div(need_int(f, {"vocab_size"}), pad) * pad;
    m.norm = opt_bool(f, "rms_norm", true) ? NormKind::rmsnorm : NormKind::layernorm;
    m.position = PositionKind::rotary;
    m.final_norm_params = m.norm == NormKind::rmsnorm ? m.hidden : 2 * m.hidden;
    m.tie_word_embeddings = opt_bool(f, "tie_embeddings", true);
    m.activation = "silu";
    if (f.has("attn_layer_idx") && f.raw("attn_layer_idx")->is_array() && !f.raw("attn_layer_idx")->empty())
        f.fail("attn_layer_idx", "attention layers in a mamba_ssm checkpoint are not modelled");
    const int64_t mlp = opt_int(f, {"d_intermediate"}, 0);
    const Fields s = f.has("ssm_cfg") ? f.child("ssm_cfg") : f;
    const std::string layer = s.get_string("layer").value_or("Mamba1");
    LayerSpec l = mixer_block(m.hidden);
    l.norm_bias = m.norm == NormKind::layernorm;
    const int64_t inner = opt_int(s, {"expand"}, 2, 1) * m.hidden;
    if (layer == "Mamba1") {
        set_mamba1(l, inner, opt_int(s, {"d_state"}, 16, 1), opt_int(s, {"d_conv"}, 4, 1),
                   auto_int(s, "dt_rank", ceil_div(m.hidden, 16)), opt_bool(s, "conv_bias", true), opt_bool(s, "bias", false));
    } else if (layer == "Mamba2") {
        const int64_t head_dim = opt_int(s, {"headdim"}, 64, 1);
        set_mamba2(s, l, inner, inner / head_dim, opt_int(s, {"ngroups"}, 1, 1), opt_int(s, {"d_state"}, 128, 1),
                   opt_int(s, {"d_conv"}, 4, 1), opt_int(s, {"chunk_size"}, 256, 1), opt_bool(s, "conv_bias", true),
                   opt_bool(s, "bias", false), opt_bool(s, "rmsnorm", true));
    } else {
        s.fail("layer", "expected Mamba1 or Mamba2");
    }
    if (mlp > 0) {   // mixer_seq_simple.py create_block: a GatedMLP (fc1 -> 2 d_intermediate, fc2, no biases) and norm2
        l.ffn_intermediate = mlp;
        l.ffn_kind = FfnKind::gated;
        l.norms = 2;
    }
    m.layers.assign(size_t(layers), l);
    return m;
}

// Grouped-query attention of the hybrids (q/k/v/o, one bias switch, head_dim or hidden / heads).
void set_attention(const Fields& f, LayerSpec& l, int64_t heads, int64_t kv, int64_t head_dim, bool bias) {
    check_kv(f, "num_key_value_heads", heads, kv);
    l.heads = heads;
    l.kv_heads = kv;
    l.head_dim = head_dim;
    l.qkv_bias = l.o_bias = bias;
}

int64_t head_dim_of(const Fields& f, int64_t hidden, int64_t heads) {
    if (f.has("head_dim") && !f.raw("head_dim")->is_null()) return *f.get_int("head_dim", 1, 1 << 20);
    check_divisible(f, "num_attention_heads", hidden, heads);
    return hidden / heads;
}

// jamba (JambaForCausalLM, modeling_jamba.py): layer i attends when i % attn_layer_period == attn_layer_offset, else
// it runs JambaMambaMixer (MambaMixer's tensors plus dt_layernorm [R], b_layernorm and c_layernorm [N]); its FFN is
// JambaSparseMoeBlock (router nn.Linear(hidden, experts, bias=False), experts JambaMLP gate/up/down) when
// num_experts > 1 and i % expert_layer_period == expert_layer_offset, else one JambaMLP; input_layernorm and
// pre_ff_layernorm per layer, final_layernorm, no positional embedding. JambaConfig defaults: periods 8 / 2, offsets
// 4 / 1, 16 experts top 2, mamba_d_state 16, mamba_d_conv 4, mamba_expand 2, mamba_dt_rank "auto", mamba_conv_bias
// true, mamba_proj_bias false, untied.
ModelSpec read_jamba(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t ffn = need_int(f, {"intermediate_size"});
    const int64_t heads = need_int(f, {"num_attention_heads"});
    const int64_t kv = opt_int(f, {"num_key_value_heads"}, 8, 1);
    check_divisible(f, "num_attention_heads", m.hidden, heads);
    const int64_t attn_period = opt_int(f, {"attn_layer_period"}, 8, 1), attn_offset = opt_int(f, {"attn_layer_offset"}, 4);
    const int64_t moe_period = opt_int(f, {"expert_layer_period"}, 2, 1), moe_offset = opt_int(f, {"expert_layer_offset"}, 1);
    const int64_t experts = opt_int(f, {"num_experts"}, 16, 1);
    const int64_t state = opt_int(f, {"mamba_d_state"}, 16, 1), dt_rank = auto_int(f, "mamba_dt_rank", ceil_div(m.hidden, 16));
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec l = base_layer(m.hidden, 0, 0, 0, ffn);
        if (i % attn_period == attn_offset) {
            set_attention(f, l, heads, kv, m.hidden / heads, false);
        } else {
            set_mamba1(l, opt_int(f, {"mamba_expand"}, 2, 1) * m.hidden, state, opt_int(f, {"mamba_d_conv"}, 4, 1), dt_rank,
                       opt_bool(f, "mamba_conv_bias", true), opt_bool(f, "mamba_proj_bias", false));
            l.ssm_extra_params = dt_rank + 2 * state;
        }
        if (experts > 1 && i % moe_period == moe_offset) {
            l.experts = experts;
            l.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 2, 1);
        }
        m.layers.push_back(l);
    }
    return m;
}

// falcon_h1 (FalconH1ForCausalLM, modeling_falcon_h1.py): every FalconH1DecoderLayer runs FalconH1Mixer (Mamba-2 with
// d_inner = mamba_d_ssm, or mamba_expand * hidden; the gated norm only with mamba_rms_norm; in_proj bias
// mamba_proj_bias, out_proj bias projectors_bias) and FalconH1Attention (LlamaAttention: attention_bias on q/k/v/o)
// on the same input_layernorm output, then pre_ff_layernorm and FalconH1MLP (LlamaMLP, mlp_bias); final_layernorm,
// rotary positions. FalconH1Config defaults: mamba_n_groups 1, mamba_d_conv 4, mamba_expand 2, mamba_chunk_size 256,
// mamba_conv_bias true, mamba_proj_bias false, mamba_rms_norm false, projectors_bias false, untied.
ModelSpec read_falcon_h1(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = need_int(f, {"num_attention_heads"});
    LayerSpec l = base_layer(m.hidden, 0, 0, 0, need_int(f, {"intermediate_size"}));
    set_attention(f, l, heads, opt_int(f, {"num_key_value_heads"}, heads, 1), head_dim_of(f, m.hidden, heads),
                  opt_bool(f, "attention_bias", false));
    l.mlp_bias = opt_bool(f, "mlp_bias", false);
    const int64_t inner = f.has("mamba_d_ssm") && !f.raw("mamba_d_ssm")->is_null()
                              ? need_int(f, {"mamba_d_ssm"}) : opt_int(f, {"mamba_expand"}, 2, 1) * m.hidden;
    set_mamba2(f, l, inner, need_int(f, {"mamba_n_heads"}), opt_int(f, {"mamba_n_groups"}, 1, 1),
               need_int(f, {"mamba_d_state"}), opt_int(f, {"mamba_d_conv"}, 4, 1), opt_int(f, {"mamba_chunk_size"}, 256, 1),
               opt_bool(f, "mamba_conv_bias", true), opt_bool(f, "mamba_proj_bias", false), opt_bool(f, "mamba_rms_norm", false));
    if (opt_bool(f, "projectors_bias", false)) l.ssm_extra_params = m.hidden;   // out_proj's bias
    l.parallel_attn_mlp = false;
    m.layers.assign(size_t(layers), l);
    return m;
}

// A list of one string per layer.
std::vector<std::string> per_layer(const Fields& f, const char* key, int64_t layers, const std::string& choices) {
    std::vector<std::string> out;
    const Json& t = *f.raw(key);
    if (!t.is_array() || static_cast<int64_t>(t.size()) != layers)
        f.fail(key, "expected one of " + choices + " per layer, " + std::to_string(layers) + " in all");
    for (const auto& v : t) {
        if (!v.is_string()) f.fail(key, "expected one of " + choices + " per layer");
        out.push_back(v.get<std::string>());
    }
    return out;
}

// granitemoehybrid (GraniteMoeHybridForCausalLM, modeling_granitemoehybrid.py): layer_types (default all "mamba")
// picks GraniteMoeHybridMambaLayer (Mamba2Mixer's tensors: d_inner = mamba_expand * hidden, gated norm) or
// GraniteMoeHybridAttention (q/k/v/o, attention_bias); every layer then has GraniteMoeHybridMoE when
// num_local_experts > 0 (router nn.Linear(hidden, experts, bias=False), input_linear [E, 2 I, hidden], output_linear
// [E, hidden, I]: gated experts of intermediate_size) and GraniteMoeHybridMLP, the shared expert (input_linear
// hidden -> 2 shared_intermediate_size, output_linear), with input_layernorm and post_attention_layernorm; norm.
// Defaults as GraniteMoeHybridConfig gives them (configuration_granitemoehybrid.py).
ModelSpec read_granitemoehybrid(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t heads = opt_int(f, {"num_attention_heads"}, 32, 1);
    const int64_t kv = f.has("num_key_value_heads") && !f.raw("num_key_value_heads")->is_null()
                           ? opt_int(f, {"num_key_value_heads"}, heads, 1) : heads;
    const int64_t experts = opt_int(f, {"num_local_experts"}, 8);
    const int64_t ffn = opt_int(f, {"intermediate_size"}, 11008, 1), shared = opt_int(f, {"shared_intermediate_size"}, 1024);
    const std::vector<std::string> types = f.has("layer_types") && !f.raw("layer_types")->is_null()
                                               ? per_layer(f, "layer_types", layers, "mamba | attention")
                                               : std::vector<std::string>(size_t(layers), "mamba");
    const int64_t inner = opt_int(f, {"mamba_expand"}, 2, 1) * m.hidden;
    for (int64_t i = 0; i < layers; ++i) {
        LayerSpec l = base_layer(m.hidden, 0, 0, 0, experts > 0 ? ffn : shared);
        if (types[size_t(i)] == "attention") {
            set_attention(f, l, heads, kv, head_dim_of(f, m.hidden, heads), opt_bool(f, "attention_bias", false));
        } else if (types[size_t(i)] == "mamba") {
            set_mamba2(f, l, inner, opt_int(f, {"mamba_n_heads"}, 128, 1), opt_int(f, {"mamba_n_groups"}, 1, 1),
                       opt_int(f, {"mamba_d_state"}, 256, 1), opt_int(f, {"mamba_d_conv"}, 4, 1),
                       opt_int(f, {"mamba_chunk_size"}, 256, 1), opt_bool(f, "mamba_conv_bias", true),
                       opt_bool(f, "mamba_proj_bias", false), true);
        } else {
            f.fail("layer_types", "expected mamba or attention, got '" + types[size_t(i)] + "'");
        }
        if (experts > 0) {
            l.experts = experts;
            l.experts_per_token = opt_int(f, {"num_experts_per_tok"}, 2, 1);
            l.shared_expert_intermediate = shared;
        }
        m.layers.push_back(l);
    }
    return m;
}

// Nemotron-H's block kinds, one character each (hybrid_override_pattern), or their names in layers_block_type
// (NemotronHConfig._pattern_to_list; transformers' MIXER_TYPES names and the configuration's newer ones).
std::string nemotron_h_pattern(const Fields& f, int64_t layers) {
    if (f.has("hybrid_override_pattern") || !f.has("layers_block_type")) {
        const std::string pattern = f.get_string("hybrid_override_pattern").value_or("");
        if (static_cast<int64_t>(pattern.size()) != layers)
            f.fail("hybrid_override_pattern", "expected one of M, *, -, E per layer, " + std::to_string(layers) + " in all");
        return pattern;
    }
    static const std::pair<const char*, char> names[] = {{"mamba", 'M'}, {"linear_attention", 'M'}, {"attention", '*'},
                                                         {"full_attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
    std::string pattern;
    for (const std::string& t : per_layer(f, "layers_block_type", layers, "mamba | attention | mlp | moe")) {
        const auto it = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return t == n.first; });
        if (it == std::end(names)) f.fail("layers_block_type", "unknown block '" + t + "' (expected mamba, attention, mlp, moe)");
        pattern += it->second;
    }
    return pattern;
}

// Nemotron-H's mixture-of-experts block (NemotronHMoE, transformers modular_nemotron_h.py at 008d9e95): a router of
// n_routed_experts over the hidden state with e_score_correction_bias (NemotronHTopkRouter = DeepseekV3TopkRouter),
// n_routed_experts non-gated experts (NemotronHExperts: up_proj [E, I, in], down_proj [E, in, I], no biases,
// mlp_hidden_act) of moe_intermediate_size, whose in is moe_latent_size when set (fc1_latent_proj hidden -> latent
// and fc2_latent_proj latent -> hidden around them), else hidden; and one shared expert, NemotronHMLP (up, down) of
// moe_shared_expert_intermediate_size on the hidden state (n_shared_experts does not size it). NemotronHConfig's
// defaults (8 experts of 7688, top 2) are no published checkpoint's: the sizes are required.
void set_nemotron_h_moe(const Fields& f, LayerSpec& l) {
    if (opt_bool(f, "mlp_bias", false))
        f.fail("mlp_bias", "biases on a mixture-of-experts block's shared expert and latent projections are not modelled");
    l.experts = need_int(f, {"n_routed_experts", "num_local_experts"});
    l.experts_per_token = need_int(f, {"num_experts_per_tok"});
    if (l.experts_per_token > l.experts)
        f.fail("num_experts_per_tok", std::to_string(l.experts_per_token) + " exceeds the " + std::to_string(l.experts) +
                                          " routed experts");
    l.ffn_intermediate = need_int(f, {"moe_intermediate_size"});
    l.ffn_kind = FfnKind::plain;
    l.router_bias = true;
    l.shared_expert_intermediate = need_int(f, {"moe_shared_expert_intermediate_size"});
    l.moe_latent = f.has("moe_latent_size") && !f.raw("moe_latent_size")->is_null() ? need_int(f, {"moe_latent_size"}) : 0;
    if (double(l.experts) * 2 * double(l.expert_width()) * double(l.ffn_intermediate) > 1e15)
        f.fail("n_routed_experts", "the experts describe more than 10^15 parameters");
}

// nemotron_h (NemotronHForCausalLM, modeling_nemotron_h.py): hybrid_override_pattern (or layers_block_type) has one
// character per NemotronHBlock (a norm and one mixer): M NemotronHMamba2Mixer (d_inner = mamba_num_heads *
// mamba_head_dim, gated norm, use_conv_bias / use_bias), * NemotronHAttention (q/k/v/o, attention_bias, head_dim),
// - NemotronHMLP (up_proj, mlp_hidden_act, down_proj, mlp_bias), E NemotronHMoE (set_nemotron_h_moe); norm_f, no
// positions. The multi-token-prediction layers (num_nextn_predict_layers, mtp.*) are skipped on load
// (_keys_to_ignore_on_load_unexpected) and not counted.
ModelSpec read_nemotron_h(const Fields& f) {
    ModelSpec m = ssm_base(f, "hidden_size", "vocab_size", false);
    const int64_t layers = need_int(f, {"num_hidden_layers"}, 1, kMaxLayers);
    const std::string pattern = nemotron_h_pattern(f, layers);
    m.activation = f.get_string("mlp_hidden_act").value_or("relu2");
    for (const char c : pattern) {
        LayerSpec l = mixer_block(m.hidden);
        if (c == 'M') {
            const int64_t heads = need_int(f, {"mamba_num_heads"});
            set_mamba2(f, l, heads * need_int(f, {"mamba_head_dim"}), heads, need_int(f, {"n_groups"}),
                       need_int(f, {"ssm_state_size"}), opt_int(f, {"conv_kernel"}, 4, 1), need_int(f, {"chunk_size"}),
                       opt_bool(f, "use_conv_bias", true), opt_bool(f, "use_bias", false), true);
        } else if (c == '*') {
            const int64_t heads = need_int(f, {"num_attention_heads"});
            set_attention(f, l, heads, need_int(f, {"num_key_value_heads"}), head_dim_of(f, m.hidden, heads),
                          opt_bool(f, "attention_bias", false));
        } else if (c == '-') {
            l.ffn_intermediate = need_int(f, {"intermediate_size"});
            l.ffn_kind = FfnKind::plain;
            l.mlp_bias = opt_bool(f, "mlp_bias", false);
        } else if (c == 'E') {
            set_nemotron_h_moe(f, l);
        } else {
            f.fail("hybrid_override_pattern", std::string("unknown block '") + c + "' (expected M, *, -, E)");
        }
        m.layers.push_back(l);
    }
    return m;
}

}  // namespace

ModelSpec mamba_ssm_checkpoint(const Fields& f) { return read_mamba_ssm(f); }

const std::vector<FamilyReader>& hybrid_families() {
    static const std::vector<FamilyReader> families = {
        {"mamba", read_mamba},
        {"mamba2", read_mamba2},
        {"jamba", read_jamba},
        {"falcon_h1", read_falcon_h1},
        {"granitemoehybrid", read_granitemoehybrid},
        {"nemotron_h", read_nemotron_h},
    };
    return families;
}

}  // namespace ftb::hf
