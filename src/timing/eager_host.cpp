// Host time of eager PyTorch (eager_host.hpp): measured per-op costs times the ops each phase issues.
#include "timing/eager_host.hpp"

#include <bit>

#include "memory/training_setup.hpp"

namespace ftb {

bool issues_eagerly(const WorkContext& c) { return !c.compiled && !c.job.system.cpu_only; }

namespace {

// LoRA A and B of each adapted linear (OFT: its rotation blocks). A fused q/k/v projection (LitGPT's LoRAQKVLinear, lit_gpt/lora.py 8641822:
// one lora_A of r * sum(enable_lora) rows and one lora_B) holds one pair whichever of q, k, v it adapts.
double adapter_tensors(const LayerSpec& l, const WorkContext& c) {
    uint32_t lora = c.set.lora_mask;
    double kda = 0;   // KDA's q/k/v/o_proj answer to attention's target names
    if (l.ssm == SsmKind::kda)
        for (const MixerLinear& x : kda_linears(l)) kda += (lora & x.bits) ? 1 : 0;
    // Linears a block lacks hold no adapter (a state-space block has no attention, Mamba's blocks no FFN).
    if (!l.has_attention()) lora &= ~uint32_t(kQ | kK | kV | kO);
    if (l.ffn_intermediate == 0) lora &= ~uint32_t(kGate | kUp | kDown);
    const uint32_t qkv = lora & (kQ | kK | kV);
    double linears = (c.fused_qkv ? (qkv ? 1 : 0) : double(std::popcount(qkv))) + kda;
    linears += (lora & kO) ? 1 : 0;
    linears += (lora & kDown) ? 1 : 0;
    linears += (lora & kUp) ? 1 : 0;
    if (l.ffn_kind == FfnKind::gated && (lora & kGate)) linears += 1;
    if (l.shared_expert_intermediate > 0)
        linears += double(std::popcount(lora & ((l.ffn_kind == FfnKind::gated ? kGate : 0u) | kUp | kDown)));
    if (l.moe_latent > 0 && (lora & kMoeLatent)) linears += 2;   // fc1 / fc2_latent_proj
    if (l.ssm == SsmKind::mamba1) linears += double(std::popcount(lora & kSsmLinears));
    if (l.ssm == SsmKind::mamba2 || l.ssm == SsmKind::short_conv)
        linears += double(std::popcount(lora & (kSsmIn | kSsmOut)));
    // Gated DeltaNet: an in_proj target adapts in_proj_qkvz and in_proj_ba (Qwen3.5: in_proj_qkv, _z, _b, _a; two here)
    if (l.ssm == SsmKind::gated_delta) linears += ((lora & kSsmIn) ? 2 : 0) + ((lora & kSsmOut) ? 1 : 0);
    // OFT holds one tensor per adapted linear (PEFT OFTRotationModule.weight, r x b(b-1)/2).
    return (c.set.oft ? 1 : 2) * linears;
}

// Every weight, bias and norm weight of a block that trains (experts counted as one tensor per projection kind:
// grouped-GEMM MoE layers hold them stacked).
double trained_tensors(const LayerSpec& l, const WorkContext& c) {
    const double attention_linears = c.fused_qkv ? 2 : 4;
    double tensors = l.has_attention() ? attention_linears * (l.cross_attention ? 2 : 1) : 0;
    if (l.qkv_bias) tensors += c.fused_qkv ? 1 : 3;
    if (l.o_bias) tensors += 1;
    const double ffn_linears = l.ffn_kind == FfnKind::gated ? 3 : 2;
    if (l.ffn_intermediate > 0) tensors += ffn_linears + (l.mlp_bias ? ffn_linears : 0);
    // The mixer's tensors (LayerSpec::ssm_params): mamba1 in_proj, conv1d, x_proj, dt_proj (+ bias), A_log, D,
    // out_proj; mamba2 in_proj, conv1d, dt_bias, A_log, D, the gated norm, out_proj; plus the biases it has.
    if (l.ssm == SsmKind::mamba1) tensors += 8 + (l.ssm_conv_bias ? 1 : 0) + (l.ssm_proj_bias ? 2 : 0);
    if (l.ssm == SsmKind::mamba2)
        tensors += 6 + (l.ssm_gated_norm ? 1 : 0) + (l.ssm_conv_bias ? 1 : 0) + (l.ssm_proj_bias ? 2 : 0);
    // gated_delta in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, the gated norm, out_proj; short_conv in_proj,
    // conv, out_proj (+ a bias each with conv_bias).
    if (l.ssm == SsmKind::gated_delta) tensors += 6 + (l.ssm_gated_norm ? 1 : 0);
    // kda: nine linears, three convolutions, dt_bias, A_log, o_norm
    if (l.ssm == SsmKind::kda) tensors += 14 + (l.ssm_gated_norm ? 1 : 0);
    if (l.ssm == SsmKind::short_conv) tensors += 3 * (l.ssm_conv_bias ? 2 : 1);
    if (l.ssm_extra_params > 0) tensors += 3;   // Jamba's dt, B and C norms
    if (l.experts > 0) tensors += 1;   // router
    if (l.shared_expert_intermediate > 0) tensors += double(l.shared_expert_mats());
    if (l.moe_latent > 0) tensors += 2;   // fc1 / fc2_latent_proj
    tensors += double(l.norms) * (l.norm_bias ? 2 : 1);
    return tensors;
}

}  // namespace

double block_grad_tensors(const LayerSpec& l, const WorkContext& c, bool trains) {
    if (trains) return trained_tensors(l, c);
    return c.set.adapters ? adapter_tensors(l, c) : 0;
}

PhaseHostSeconds eager_host_seconds(double forward_kernels, double backward_kernels, double recompute_kernels,
                                    double grad_tensors, double launch_overhead_scale) {
    PhaseHostSeconds h;
    h.forward_s = forward_kernels * kEagerForwardKernelSeconds / launch_overhead_scale;
    h.backward_s = (backward_kernels * kEagerBackwardKernelSeconds + recompute_kernels * kEagerForwardKernelSeconds +
                    grad_tensors * kAccumulateGradSeconds) /
                   launch_overhead_scale;
    return h;
}

}  // namespace ftb
