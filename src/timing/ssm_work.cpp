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

// Gated DeltaNet (Qwen3NextGatedDeltaNet.forward, Qwen3_5GatedDeltaNet.forward) with flash-linear-attention
// installed: chunk_gated_delta_rule (fla/ops/gated_delta_rule/chunk.py, commit 0315a70e) over H value heads in chunks of
// C = 64. The chunk products (model/ssm.cpp gated_delta_flops) run as tensor-core GEMMs, stacked here into one GEMM per
// kind: within a chunk beta K K^T, w, u, the masked q k^T and its product with v_new (causal: C/2 on average); across
// chunks w S, the state update k^T v_new and q S. Memory: q and k l2-normalised in the kernel, A written in fp32 by
// chunk_scaled_dot_kkt_fwd and rewritten in k's dtype by solve_tril (C per head and token, read again by
// recompute_w_u_fwd), the per-chunk states h written by chunk_gated_delta_rule_fwd_h and read by chunk_fwd_o, v_new.
// The backward (chunk_gated_delta_rule_bwd) first reruns recompute_w_u_fwd and chunk_gated_delta_rule_fwd_h (w, u and
// h are not kept), then differentiates both operands of every product (chunk_bwd_dv_local, _bwd_dhu, chunk_bwd_dqkwg,
// prepare_wy_repr_bwd) and moves the state gradients dh like h.
void add_gated_delta(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq, bool needs_grad) {
    const double B = c.act_bytes, C = delta_rule_chunk(seq);
    const double H = std::max(1.0, double(l.ssm_heads) / c.tp), dk = double(l.ssm_state);
    const double dv = double(l.ssm_inner) / double(l.ssm_heads);
    auto intra = [&](Work& pass, bool w_u_only) {
        add_gemm(pass, c, tokens * H, dk, C / 2);               // w = A (beta exp(g) k)
        add_gemm(pass, c, tokens * H, dv, C / 2);               // u = A (beta v)
        if (w_u_only) return;
        add_gemm(pass, c, tokens * H, C / 2, dk);               // beta K K^T
        add_gemm(pass, c, tokens * H, C / 2, dk);               // q k^T
        add_gemm(pass, c, tokens * H, dv, C / 2);               // (q k^T) v_new
    };
    auto across = [&](Work& pass, bool state_only) {
        add_gemm(pass, c, tokens * H, dv, dk);                  // w S
        add_gemm(pass, c, dk * tokens / C * H, dv, C);          // S += k^T v_new, per chunk
        if (!state_only) add_gemm(pass, c, tokens * H, dv, dk); // q S
    };
    const double solve_flops = tokens * H * 2 * C * C / 3;
    const double states = tokens / C * H * dk * dv * B;                        // h, one write and one read
    const double moved = tokens * H * (2 * 2 * dk * B + C * (4 + 4 + 2 + 2) + 2 * dv * B) + 2 * states;
    intra(w.forward, false);
    across(w.forward, false);
    add_memory_bound(w.forward, c, moved, 3);   // the two l2 norms and the gates' chunk cumulative sum
    w.forward.flops += solve_flops;
    if (!needs_grad) return;
    intra(w.backward, true);                    // the forward's w, u and h, rebuilt
    across(w.backward, true);
    for (int t = 0; t < 2; ++t) intra(w.backward, false), across(w.backward, false);
    add_memory_bound(w.backward, c, 2 * moved + 2 * states, 6);
    w.backward.flops += 2 * solve_flops;
}

// The eager PyTorch glue around Gated DeltaNet's kernels (Qwen3NextGatedDeltaNet.forward, transformers
// modular_qwen3_next.py commit 043bb8dd; ten ops forward: cat, two repeat_interleave, two copies, sigmoid, float, add,
// softplus, mul): the concatenation of q, k and v into the convolution's input, q and k repeated from the key heads to
// the value heads, the contiguous copies of v and z, beta = sigmoid(b) and g = -exp(A_log) softplus(a + dt_bias) in
// fp32 (about ten fp32 values moved per head). The backward moves about twice as much.
void add_gated_delta_glue(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, bool needs_grad) {
    const double B = c.act_bytes, I = double(l.ssm_inner) / c.tp;
    const double H = std::max(1.0, double(l.ssm_heads) / c.tp), G = std::max(1.0, double(l.ssm_groups) / c.tp);
    const double N = double(l.ssm_state), conv = double(l.ssm_conv_width()) / c.tp;
    const double bytes = tokens * (B * (2 * conv + 2 * 2 * (G * N + H * N) + 2 * 2 * I) + 40 * H);
    add_memory_bound(w.forward, c, bytes, 10);
    if (needs_grad) add_memory_bound(w.backward, c, 2 * bytes, 12);
}

// LFM2's gating around its convolution (Lfm2ShortConv.cuda_kernels_forward): B * x before causal_conv1d_fn, C times its
// output after it, and the transposed copy out_proj reads: each product reads two channels' worth and writes one.
// The backward differentiates both factors of each product.
void add_short_conv_gates(LayerWork& w, const WorkContext& c, double tokens, double I, bool needs_grad) {
    const double B = c.act_bytes;
    add_memory_bound(w.forward, c, tokens * 8 * B * I, 3);
    w.forward.flops += 2 * tokens * I;
    if (!needs_grad) return;
    add_memory_bound(w.backward, c, tokens * 16 * B * I, 5);
    w.backward.flops += 4 * tokens * I;
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
    if (l.ssm == SsmKind::short_conv) {
        add_short_conv_gates(w, c, tokens, double(l.ssm_inner) / c.tp, needs_grad);
        return;
    }
    if (l.delta_rule()) {   // KDA: fla chunk_kda, the same chunked products with a decay per key channel
        add_gated_delta(w, l, c, tokens, seq, needs_grad);
        add_gated_delta_glue(w, l, c, tokens, needs_grad);
    } else {
        add_ssd(w, l, c, tokens, seq, needs_grad);
    }
    // The gated RMSNorm (mamba_ssm rmsnorm_fn with z; fla FusedRMSNormGated per head): reads y and z, writes its output
    if (l.ssm_gated_norm) {
        const double I = double(l.ssm_inner) / c.tp;
        add_memory_bound(w.forward, c, tokens * 3 * c.act_bytes * I, 1);
        if (needs_grad) add_memory_bound(w.backward, c, tokens * 6 * c.act_bytes * I, 2);
    }
}

}  // namespace ftb
