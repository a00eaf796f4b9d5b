// The state-space core of a block (ssm_work.hpp).
#include "timing/ssm_work.hpp"

#include <algorithm>

#include "model/ssm.hpp"

namespace ftb {
namespace {

// causal_conv1d_fn (causal-conv1d, fused with its silu): the forward reads and writes every channel once; the
// backward reads the input and the output gradient and writes the input gradient, and with mamba_inner_fn's
// checkpoint_lvl 1 (its default) first runs the forward again to rebuild the output it did not keep.
void add_conv(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double channels, bool recomputed,
              bool needs_grad) {
    const double B = c.act_bytes, flops = 2.0 * double(l.ssm_conv) * channels * tokens;
    add_memory_bound(w.forward, c, tokens * 2 * B * channels, 1);
    w.forward.flops += flops;
    if (!needs_grad) return;
    add_memory_bound(w.backward, c, tokens * (3 + (recomputed ? 2 : 0)) * B * channels, recomputed ? 2 : 1);
    w.backward.flops += (recomputed ? 3 : 2) * flops;
}

// Mamba-1: selective_scan_fn (mamba_ssm csrc/selective_scan) keeps the state in on-chip memory: the forward reads
// u, delta and z (I each) and B, C (N each) and writes the output and the gated output; the backward reads them and
// the output gradient and writes du, ddelta, dz, dB, dC. Memory-bound (Gu & Dao 2023, section 3.3.2: the scan's cost
// is its memory traffic once the state stays in SRAM); its 7 I N FLOPs are counted, not timed.
void add_selective_scan(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq, bool needs_grad) {
    const double B = c.act_bytes, I = double(l.ssm_inner) / c.tp, N = double(l.ssm_state);
    const double flops = ssm_core_forward_flops(l, seq).scan / c.tp;
    add_memory_bound(w.forward, c, tokens * B * (5 * I + 2 * N), 1);
    w.forward.flops += tokens * flops;
    if (!needs_grad) return;
    add_memory_bound(w.backward, c, tokens * B * (9 * I + 4 * N), 1);
    w.backward.flops += 2 * tokens * flops;
}

// Mamba-2: mamba_chunk_scan_combined (mamba_ssm ops/triton/ssd_combined.py): the chunk products run as batched
// tensor-core GEMMs, here stacked into one GEMM each: C B^T per group (causal: Q/2 keys on average), B^T x per head
// into the chunk states, the masked scores times x (Q/2) and C times the states; _chunk_cumsum and _state_passing
// move the step sizes and the states between chunks (fp32). The backward differentiates both operands of each.
void add_ssd(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq, bool needs_grad) {
    const double Q = ssd_chunk(l, seq), N = double(l.ssm_state);
    const double H = std::max(1.0, double(l.ssm_heads) / c.tp), G = std::max(1.0, double(l.ssm_groups) / c.tp);
    const double P = double(l.ssm_inner) / double(l.ssm_heads);
    auto products = [&](Work& pass, double times) {
        for (int t = 0; t < int(times); ++t) {
            add_gemm(pass, c, tokens * G, Q / 2, N);            // C B^T
            add_gemm(pass, c, N * tokens / Q * H, P, Q);        // chunk states
            add_gemm(pass, c, tokens * H, P, Q / 2);            // scores x
            add_gemm(pass, c, tokens * H, P, N);                // C states
        }
    };
    const double state_bytes = tokens / Q * H * P * N * 4 * 2;   // chunk states written and read, fp32
    const double skip_flops = 2 * tokens * H * P;   // D * x added to the output, fused into _chunk_scan_fwd
    products(w.forward, 1);
    add_memory_bound(w.forward, c, state_bytes + tokens * H * 4 * 3, 2);
    w.forward.flops += skip_flops;
    if (!needs_grad) return;
    products(w.backward, 2);
    add_memory_bound(w.backward, c, 2 * state_bytes + tokens * H * 4 * 6, 4);
    w.backward.flops += 2 * skip_flops;
}

}  // namespace

void add_ssm_core(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq, bool needs_grad) {
    if (l.ssm == SsmKind::none) return;
    const double channels = double(l.ssm_conv_width()) / c.tp;
    add_conv(w, l, c, tokens, channels, l.ssm == SsmKind::mamba1, needs_grad);
    if (l.ssm == SsmKind::mamba1) {
        add_selective_scan(w, l, c, tokens, seq, needs_grad);
        return;
    }
    add_ssd(w, l, c, tokens, seq, needs_grad);
    if (l.ssm_gated_norm) {   // the gated RMSNorm (mamba_ssm rmsnorm_fn with z): reads y and z, writes its output
        const double I = double(l.ssm_inner) / c.tp;
        add_memory_bound(w.forward, c, tokens * 3 * c.act_bytes * I, 1);
        if (needs_grad) add_memory_bound(w.backward, c, tokens * 6 * c.act_bytes * I, 2);
    }
}

}  // namespace ftb
