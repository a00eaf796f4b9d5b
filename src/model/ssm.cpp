// State-space core FLOPs (ssm.hpp).
#include "model/ssm.hpp"

#include <algorithm>

namespace ftb {

double ssd_chunk(const LayerSpec& l, double seq) {
    return std::max(1.0, std::min(double(l.ssm_chunk > 0 ? l.ssm_chunk : 256), seq));
}

double delta_rule_chunk(double seq) { return std::max(1.0, std::min(64.0, seq)); }

namespace {

// The gated delta rule in chunks of C (Yang, Kautz & Hatamizadeh 2024, "Gated Delta Networks", section 3.3; fla
// chunk_gated_delta_rule_fwd), per value head (q and k repeated from the G key heads to the H value heads, as
// Qwen3NextGatedDeltaNet.forward does before the call) with d_k = N and d_v = I / H, per token:
// chunk_scaled_dot_kkt_fwd beta K K^T (causal half of the C x C block: C d_k), solve_tril inverting the unit
// lower-triangular C x C block (C^3 / 3 multiply-adds per chunk: 2 C^2 / 3 per token), recompute_w_u_fwd w = A (beta
// exp(g) k) and u = A (beta v) (C d_k + C d_v, causal), chunk_gated_delta_rule_fwd_h v_new = u - w S and the state
// update S += k^T v_new (2 d_k d_v each), chunk_fwd_o q S (2 d_k d_v) and the masked (q k^T) v_new (C d_k + C d_v).
// The l2 norms of q and k, the gates' cumulative sums and the state decays are O(d) per token and left out.
double gated_delta_flops(const LayerSpec& l, double seq) {
    const double C = delta_rule_chunk(seq), H = double(l.ssm_heads), dk = double(l.ssm_state);
    const double dv = double(l.ssm_inner) / H;
    return H * (3 * C * dk + 2 * C * dv + 6 * dk * dv + 2 * C * C / 3);
}

}  // namespace

SsmCoreFlops ssm_core_forward_flops(const LayerSpec& l, double seq) {
    SsmCoreFlops f;
    if (l.ssm == SsmKind::none) return f;
    const double I = double(l.ssm_inner), N = double(l.ssm_state);
    // Depthwise causal Conv1d of kernel K over every channel: a multiply and an add per tap.
    f.conv = 2.0 * double(l.ssm_conv) * double(l.ssm_conv_width());
    if (l.delta_rule()) {   // KDA's per-channel decay (fla chunk_kda) changes only the O(d) gate work
        f.scan = gated_delta_flops(l, seq);
        return f;
    }
    if (l.ssm == SsmKind::short_conv) {   // Lfm2ShortConv: B * x before the convolution, C * conv_out after it
        f.scan = 2.0 * I;
        return f;
    }
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
