// State-space core FLOPs (ssm.hpp).
#include "model/ssm.hpp"

#include <algorithm>

namespace ftb {

double ssd_chunk(const LayerSpec& l, double seq) {
    return std::max(1.0, std::min(double(l.ssm_chunk > 0 ? l.ssm_chunk : 256), seq));
}

SsmCoreFlops ssm_core_forward_flops(const LayerSpec& l, double seq) {
    SsmCoreFlops f;
    if (l.ssm == SsmKind::none) return f;
    const double I = double(l.ssm_inner), N = double(l.ssm_state);
    // Depthwise causal Conv1d of kernel K over every channel: a multiply and an add per tap.
    f.conv = 2.0 * double(l.ssm_conv) * double(l.ssm_conv_width());
    if (l.ssm == SsmKind::mamba1) {
        // The selective scan per channel i and state n (transformers modeling_mamba.py MambaMixer.slow_forward, the
        // arithmetic selective_scan_fn fuses): exp(A * dt) one product, dt * B one, (dt B) * x one, the recurrence
        // dA * h + dBx two, the output C . h two: 7 I N; then y + D * x (2 I) and y * silu(z) (I).
        f.scan = 7.0 * I * N + 3.0 * I;
        return f;
    }
    // Mamba-2's SSD in chunks of Q (Dao & Gu 2024, "Transformers are SSMs", section 6; mamba_ssm
    // ops/triton/ssd_combined.py _mamba_chunk_scan_combined_fwd): per chunk C B^T per group (_bmm_chunk_fwd, causal:
    // the lower half of the Q x Q blocks), its masked product with x per head (_chunk_scan_fwd, causal: Q I per token),
    // the chunk states B^T x (_chunk_state_fwd, 2 N I per token) and their read-out C . state (_chunk_scan_fwd,
    // 2 N I); the state passing between chunks is N I / Q per token and is left out; D * x adds 2 I.
    const double Q = ssd_chunk(l, seq), G = double(l.ssm_groups);
    f.scan = Q * G * N + Q * I + 4.0 * N * I + 2.0 * I;
    return f;
}

}  // namespace ftb
