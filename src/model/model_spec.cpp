// Exact parameter counts of a block and a model, from the shapes in ModelSpec.
#include "ftbound/model_spec.hpp"

namespace ftb {

int64_t LayerSpec::attention_params() const {
    auto one = [&] {
        int64_t p = hidden * q_dim() + 2 * hidden * kv_dim() + q_dim() * hidden;
        if (qkv_bias) p += q_dim() + 2 * kv_dim();
        if (o_bias) p += hidden;
        return p;
    };
    return one() * (cross_attention ? 2 : 1) + qk_norm_params;
}

int64_t LayerSpec::ffn_params() const {
    const int64_t mats = ffn_kind == FfnKind::gated ? 3 : 2;
    int64_t one = mats * hidden * ffn_intermediate;
    if (mlp_bias) one += (mats - 1) * ffn_intermediate + hidden;
    if (experts == 0) return one;
    int64_t p = experts * one + hidden * experts + (router_bias ? experts : 0);
    if (shared_expert_intermediate > 0) p += 3 * hidden * shared_expert_intermediate;
    if (shared_expert_gate) p += hidden;
    return p;
}

int64_t LayerSpec::ffn_params_active() const {
    if (experts == 0) return ffn_params();
    const int64_t mats = ffn_kind == FfnKind::gated ? 3 : 2;
    int64_t one = mats * hidden * ffn_intermediate;
    if (mlp_bias) one += (mats - 1) * ffn_intermediate + hidden;
    int64_t p = experts_per_token * one + hidden * experts + (router_bias ? experts : 0);
    if (shared_expert_intermediate > 0) p += 3 * hidden * shared_expert_intermediate;
    if (shared_expert_gate) p += hidden;
    return p;
}

int64_t LayerSpec::norm_params() const { return norms * hidden * (norm_bias ? 2 : 1); }

int64_t ModelSpec::total_params() const {
    int64_t p = embedding_params() + embedding_norm_params + final_norms * final_norm_params + lm_head_params() +
                extra_params;
    for (const auto& l : layers) p += l.params();
    return p;
}

int64_t ModelSpec::active_params() const {
    int64_t p = embedding_params() + embedding_norm_params + final_norms * final_norm_params + lm_head_params() +
                extra_params;
    for (const auto& l : layers)
        p += l.attention_params() + l.ffn_params_active() + l.norm_params() + l.relative_attention_params;
    return p;
}

bool ModelSpec::is_moe() const {
    for (const auto& l : layers)
        if (l.experts > 0) return true;
    return false;
}

}  // namespace ftb
