// Exact parameter counts of a block and a model, from the shapes in ModelSpec.
#include "ftbound/model_spec.hpp"

namespace ftb {

namespace {

// DeepseekV3Attention (transformers modeling_deepseek_v3.py): q_a_proj + q_a_layernorm + q_b_proj (or q_proj),
// kv_a_proj_with_mqa + kv_a_layernorm, kv_b_proj, o_proj; no biases unless attention_bias.
int64_t mla_attention_params(const LayerSpec& l) {
    const int64_t q_out = l.heads * l.head_dim;
    int64_t p = l.q_lora_rank > 0 ? l.hidden * l.q_lora_rank + l.q_lora_rank + l.q_lora_rank * q_out : l.hidden * q_out;
    p += l.hidden * (l.kv_lora_rank + l.qk_rope_head_dim) + l.kv_lora_rank;
    p += l.kv_lora_rank * l.heads * (l.head_dim - l.qk_rope_head_dim + l.v_head_dim);
    p += l.heads * l.v_head_dim * l.hidden;
    // attention_bias puts biases on q_a_proj, kv_a_proj_with_mqa and o_proj (q_proj and the b projections have none).
    if (l.qkv_bias) p += (l.q_lora_rank > 0 ? l.q_lora_rank : 0) + l.kv_lora_rank + l.qk_rope_head_dim;
    if (l.o_bias) p += l.hidden;
    return p;
}

}  // namespace

int64_t LayerSpec::attention_params() const {
    // Beside q, k, v and o: the per-head sink logits and the output gate's projection.
    const int64_t extra = (attention_sinks ? heads : 0) + (attention_output_gate ? hidden * q_dim() : 0);
    if (kv_lora_rank > 0) return mla_attention_params(*this) + qk_norm_params + extra;
    auto one = [&] {
        int64_t p = hidden * q_dim() + 2 * hidden * kv_dim() + q_dim() * hidden;
        if (qkv_bias) p += q_dim() + 2 * kv_dim();
        if (o_bias) p += hidden;
        return p;
    };
    return one() * (cross_attention ? 2 : 1) + qk_norm_params + extra;
}

namespace {

// One FFN, or one routed expert (over the latent width under a latent MoE).
int64_t one_expert_params(const LayerSpec& l) {
    const int64_t mats = l.ffn_kind == FfnKind::gated ? 3 : 2, w = l.expert_width();
    int64_t one = mats * w * l.ffn_intermediate;
    if (l.mlp_bias) one += (mats - 1) * l.ffn_intermediate + w;
    return one;
}

// What every token of an MoE block passes besides its routed experts: router, shared expert, latent projections.
int64_t moe_common_params(const LayerSpec& l) {
    int64_t p = l.hidden * l.experts + (l.router_bias ? l.experts : 0) + l.latent_proj_params();
    if (l.shared_expert_intermediate > 0) p += l.shared_expert_mats() * l.hidden * l.shared_expert_intermediate;
    if (l.shared_expert_gate) p += l.hidden;
    return p;
}

}  // namespace

int64_t LayerSpec::ffn_params() const {
    if (experts == 0) return one_expert_params(*this);
    return experts * one_expert_params(*this) + moe_common_params(*this);
}

int64_t LayerSpec::ffn_params_active() const {
    if (experts == 0) return ffn_params();
    return experts_per_token * one_expert_params(*this) + moe_common_params(*this);
}

int64_t LayerSpec::ssm_in_width() const {
    switch (ssm) {
        case SsmKind::mamba1: return 2 * ssm_inner;
        case SsmKind::mamba2: return 2 * ssm_inner + 2 * ssm_groups * ssm_state + ssm_heads;
        case SsmKind::gated_delta: return 2 * ssm_groups * ssm_state + 2 * ssm_inner + 2 * ssm_heads;
        case SsmKind::short_conv: return 3 * ssm_inner;
        case SsmKind::kda: return 2 * ssm_groups * ssm_state + ssm_inner + ssm_heads + 2 * ssm_state;
        case SsmKind::none: break;
    }
    return 0;
}

int64_t LayerSpec::ssm_conv_width() const {
    switch (ssm) {
        case SsmKind::mamba1:
        case SsmKind::short_conv: return ssm_inner;
        case SsmKind::mamba2:
        case SsmKind::gated_delta:
        case SsmKind::kda: return ssm_inner + 2 * ssm_groups * ssm_state;
        case SsmKind::none: break;
    }
    return 0;
}

// mamba1 (transformers modeling_mamba.py MambaMixer.__init__): in_proj [hidden -> 2 I] (+ bias with use_bias),
// conv1d depthwise [I, 1, K] (+ I bias with use_conv_bias), x_proj [I -> R + 2 N] without bias, dt_proj [R -> I] with
// bias, A_log [I, N], D [I], out_proj [I -> hidden] (+ bias). mamba2 (modeling_mamba2.py Mamba2Mixer.__init__):
// in_proj [hidden -> 2 I + 2 G N + H] (+ bias), conv1d depthwise over I + 2 G N channels (+ bias), dt_bias [H],
// A_log [H], D [H], the gated RMSNorm's weight [I] (MambaRMSNormGated), out_proj [I -> hidden] (+ bias).
// gated_delta (modeling_qwen3_next.py Qwen3NextGatedDeltaNet.__init__, transformers 043bb8dd): in_proj_qkvz
// [hidden -> 2 G N + 2 I] and in_proj_ba [hidden -> 2 H] without bias (Qwen3.5's Qwen3_5GatedDeltaNet splits them
// into in_proj_qkv, in_proj_z, in_proj_b, in_proj_a: the same shapes in all), conv1d depthwise over 2 G N + I channels
// without bias, dt_bias [H], A_log [H], the gated RMSNorm's weight [I / H] (Qwen3NextRMSNormGated over one head),
// out_proj [I -> hidden] without bias. short_conv (modeling_lfm2.py Lfm2ShortConv.__init__, transformers 02f41779):
// in_proj [hidden -> 3 hidden], conv depthwise [hidden, 1, L_cache], out_proj [hidden -> hidden], every one with a
// bias when conv_bias. kda (vLLM model_executor/layers/kda.py KimiDeltaAttention.__init__, commit 01a7e5d9):
// q_proj, k_proj [hidden -> G N], v_proj [hidden -> I], b_proj [hidden -> H], f_a_proj and g_a_proj [hidden -> N] (the
// in_proj width above), f_b_proj and g_b_proj [N -> I], o_proj [I -> hidden], all without bias; q_conv1d, k_conv1d and
// v_conv1d depthwise over G N, G N and I channels without bias; dt_bias [I] (per channel), A_log [H], o_norm's weight
// [I / H] (FusedRMSNormGated over one head).
int64_t LayerSpec::ssm_params() const {
    if (ssm == SsmKind::none) return 0;
    const int64_t I = ssm_inner, conv = ssm_conv_width();
    int64_t p = hidden * ssm_in_width() + I * hidden;                       // in_proj, out_proj
    if (ssm_proj_bias) p += ssm_in_width() + hidden;
    p += conv * ssm_conv + (ssm_conv_bias ? conv : 0);                      // conv1d
    if (ssm == SsmKind::mamba1) {
        p += I * ssm_x_width() + ssm_dt_rank * I + I;                       // x_proj, dt_proj (+ bias)
        p += I * ssm_state + I;                                             // A_log, D
    } else if (ssm == SsmKind::mamba2) {
        p += 3 * ssm_heads;                                                 // dt_bias, A_log, D
        if (ssm_gated_norm) p += I;
    } else if (ssm == SsmKind::gated_delta) {
        p += 2 * ssm_heads;                                                 // dt_bias, A_log
        if (ssm_gated_norm) p += I / ssm_heads;                             // one head's norm weight, shared
    } else if (ssm == SsmKind::kda) {
        p += 2 * ssm_state * I + I + ssm_heads;                             // f_b_proj, g_b_proj, dt_bias, A_log
        if (ssm_gated_norm) p += I / ssm_heads;                             // o_norm, one head's weight
    }
    return p + ssm_extra_params;
}

int64_t LayerSpec::ssm_linear_params() const {
    if (ssm == SsmKind::none) return 0;
    int64_t p = hidden * ssm_in_width() + ssm_inner * hidden;
    if (ssm == SsmKind::mamba1) p += ssm_inner * ssm_x_width() + ssm_dt_rank * ssm_inner;
    if (ssm == SsmKind::kda) p += 2 * ssm_state * ssm_inner;               // f_b_proj, g_b_proj
    return p;
}

int64_t LayerSpec::norm_params() const { return norms * hidden * (norm_bias ? 2 : 1); }

int64_t ModelSpec::idle_params() const {
    int64_t p = idle_norm_params;
    for (const auto& l : idle_layers) p += l.params();
    for (const auto& x : idle_linears) p += x.in * x.out;
    return p;
}

int64_t ModelSpec::total_params() const {
    int64_t p = embedding_params() + embedding_norm_params + final_norms * final_norm_params + lm_head_params() +
                extra_params + vision_params + idle_params();
    for (const auto& l : layers) p += l.params();
    return p;
}

int64_t ModelSpec::active_params() const {
    int64_t p = embedding_params() + embedding_norm_params + final_norms * final_norm_params + lm_head_params() +
                extra_params + vision_params;
    for (const auto& l : layers)
        p += l.attention_params() + l.ffn_params_active() + l.norm_params() + l.relative_attention_params +
             l.activation_params + l.ssm_params();
    return p;
}

bool ModelSpec::has_ssm() const {
    for (const auto& l : layers)
        if (l.ssm != SsmKind::none) return true;
    return false;
}

bool ModelSpec::is_moe() const {
    for (const auto& l : layers)
        if (l.experts > 0) return true;
    return false;
}

}  // namespace ftb
