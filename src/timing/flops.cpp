// FLOPs per token (flops.hpp).
#include "timing/flops.hpp"

#include <algorithm>
#include <optional>

#include "model/ssm.hpp"

namespace ftb {
namespace {

// Matmul weights one token meets in a block, and the LoRA weights on them, as the work builder shapes them.
struct BlockWeights {
    double base = 0;     // every linear the token passes (router included)
    double router = 0;   // the router, which has no LoRA
    double lora = 0;     // adapter weights the token passes (LoRA's A and B, OFT's rotation blocks)
};

// OFT's adapter on a linear is its block-diagonal rotation of the input: in / b blocks of b x b, in x b weights the
// token passes (PEFT OFTRotationModule.forward's einsum). Its Cayley-Neumann transform runs once per step, not per
// token, and is left out here (the work builder counts its kernels).
BlockWeights block_weights(const LayerSpec& l, const TrainingSetup& set, double rank, const OftConfig& oft) {
    const double h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim()), i = double(l.ffn_intermediate);
    const uint32_t mask = set.adapters ? set.lora_mask : 0;
    BlockWeights w;
    auto linear = [&](double in, double out, double count, uint32_t bits) {
        w.base += in * out * count;
        if (!(mask & bits)) return;
        w.lora += (set.oft ? in * double(oft_block_size_for(oft, int64_t(in))) : rank * (in + out)) * count;
    };
    const int attention_sets = !l.has_attention() ? 0 : l.cross_attention ? 2 : 1;
    for (int s = 0; s < attention_sets; ++s) {
        if (set.fused_qkv) linear(h, q + 2 * kv, 1, kQ | kK | kV);
        else linear(h, q, 1, kQ), linear(h, kv, 1, kK), linear(h, kv, 1, kV);
        linear(q, h, 1, kO);
        // afmoe's self_attn.gate_proj: a gate_proj target adapts it too (PEFT matches the module name's end)
        if (l.attention_output_gate) linear(h, q, 1, kGate);
    }
    if (l.ssm == SsmKind::kda)   // q, k, v, b, f_a, f_b, g_a, g_b, o_proj
        for (const MixerLinear& x : kda_linears(l)) linear(double(x.in), double(x.out), 1, x.bits);
    else if (l.ssm != SsmKind::none) {   // in_proj, (mamba1: x_proj, dt_proj,) out_proj
        const double I = double(l.ssm_inner);
        linear(h, double(l.ssm_in_width()), 1, kSsmIn);
        if (l.ssm == SsmKind::mamba1) linear(I, double(l.ssm_x_width()), 1, kSsmX), linear(double(l.ssm_dt_rank), I, 1, kSsmDt);
        linear(I, h, 1, kSsmOut);
    }
    const double active = l.experts > 0 ? double(l.experts_per_token) : (l.ffn_intermediate > 0 ? 1.0 : 0.0);
    const double e = double(l.expert_width());
    if (l.ffn_kind == FfnKind::gated) linear(e, i, active, kGate);
    linear(e, i, active, kUp);
    linear(i, e, active, kDown);
    if (l.moe_latent > 0) linear(h, e, 1, kMoeLatent), linear(e, h, 1, kMoeLatent);   // fc1 / fc2_latent_proj
    if (l.shared_expert_intermediate > 0) {
        const double s = double(l.shared_expert_intermediate);
        if (l.ffn_kind == FfnKind::gated) linear(h, s, 1, shared_gate_bits());
        linear(h, s, 1, shared_up_bits());
        linear(s, h, 1, shared_down_bits());
    }
    if (l.experts > 0) w.router = h * double(l.experts), w.base += w.router;
    return w;
}

// Forward attention FLOPs per token: QK^T and PV over the keys it sees (causal: half of them on average).
double attention_forward_flops(const LayerSpec& l, double seq) {
    const double keys = l.sliding_window > 0 ? std::min(seq, double(l.sliding_window)) : seq;
    const double causal = l.is_encoder ? 1.0 : 0.5;
    double flops = 4.0 * keys * double(l.q_dim()) * causal;
    if (l.cross_attention) flops += 4.0 * keys * double(l.q_dim());
    return flops;
}

}  // namespace

double method_flops_per_token(const Job& job, const TrainingSetup& set, double seq) {
    const ModelSpec& m = job.model;
    const double rank = double(job.spec.train.lora.rank);
    double flops = 0;
    for (size_t li = 0; li < m.layers.size(); ++li) {
        const LayerSpec& l = m.layers[li];
        const bool needs_grad = set.block_needs_grad(int64_t(li));
        const bool trains = set.block_trains(int64_t(li));
        std::optional<TrainingSetup> scratch;   // a copy only where some blocks are outside the trained part
        const TrainingSetup& block_set = set.blocks_limited() ? block_setup(set, int64_t(li), scratch.emplace()) : set;
        const BlockWeights w = block_weights(l, block_set, rank, job.spec.train.oft);
        // A state-space core counts like attention's: forward once, twice again for the input gradients.
        const double attention = attention_forward_flops(l, seq) + ssm_core_forward_flops(l, seq).total();
        flops += 2 * (w.base + w.lora) + attention;                       // forward
        if (needs_grad) flops += 2 * (w.base + w.lora) + 2 * attention;   // input gradients
        if (trains) flops += 2 * w.base;                                  // weight gradients (router included)
        if (set.adapters) flops += 2 * w.lora;                            // adapter weight gradients
    }
    const double head = double(m.vocab) * double(m.hidden);
    flops += 2 * head + 2 * head + (set.head_trains() ? 2 * head : 0);   // forward, input gradient, weight gradient
    return flops;
}

double six_n_flops_per_token(const ModelSpec& m, double seq) {
    double matmul_params = double(m.lm_head_params() > 0 ? m.lm_head_params() : m.vocab * m.hidden);
    double attention = 0;
    for (const auto& l : m.layers) {
        matmul_params += double(l.attention_params() - l.qk_norm_params - (l.attention_sinks ? l.heads : 0)) +
                         double(l.ffn_params_active()) + double(l.ssm_linear_params());
        if (l.ssm != SsmKind::none) attention += 3.0 * ssm_core_forward_flops(l, seq).total();
        const double keys = l.sliding_window > 0 ? std::min(seq, double(l.sliding_window)) : seq;
        attention += 12.0 * double(l.q_dim()) * keys * (l.cross_attention ? 2 : 1);
    }
    return 6.0 * matmul_params + attention;
}

}  // namespace ftb
