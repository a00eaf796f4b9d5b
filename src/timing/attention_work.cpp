// The attention core of a block (attention_work.hpp): eager or fused kernels at their efficiency.
#include "timing/attention_work.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ftb {

namespace {

// Transformer Engine's DotProductAttention picks cuDNN's fused attention over FlashAttention on compute capability
// 9.0 and newer ("Disabling FlashAttention to give FusedAttention preference on Hopper+ for performance reasons",
// transformer_engine/pytorch/attention/dot_product_attention/utils.py get_attention_backend, when cuDNN's
// F16_arbitrary_seqlen backend supports the shape); before Hopper it runs FlashAttention-2.
bool runs_cudnn(GpuArch arch, AttentionKernel kernel) {
    return kernel == AttentionKernel::transformer_engine && (arch == GpuArch::hopper || arch == GpuArch::blackwell);
}

}  // namespace

// FlashAttention-2 reaches "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023, FlashAttention-2,
// abstract) and is "around 2x faster than FlashAttention" (same abstract); one figure for forward and backward.
// On H100 SXM5 (989 dense bf16 TFLOP/s), head dim 128, sequence 16k (Shah et al. 2024, FlashAttention-3, Fig. 5
// forward with causal mask, Fig. 6 backward): FlashAttention-2 335 TFLOP/s forward, 322 backward;
// FlashAttention-3 616 forward, 561 backward; cuDNN 539 forward, 516 backward. The backward panels are without
// the causal mask (the paper has no causal backward figure).
double attention_efficiency(GpuArch arch, AttentionKernel kernel, bool backward) {
    constexpr double kH100DenseBf16Tflops = 989.4;   // NVIDIA H100 datasheet, SXM, dense
    const bool hopper_or_newer = arch == GpuArch::hopper || arch == GpuArch::blackwell;
    double fa2 = 0.35;   // "only 35% utilization on the H100" (FlashAttention-3 abstract): other architectures
    if (arch == GpuArch::ampere || arch == GpuArch::ada) fa2 = 0.6;   // middle of the 50-73% range
    if (hopper_or_newer) fa2 = (backward ? 322.0 : 335.0) / kH100DenseBf16Tflops;
    if (kernel == AttentionKernel::flash1) return fa2 / 2;
    if (kernel == AttentionKernel::flash3 && hopper_or_newer) return (backward ? 561.0 : 616.0) / kH100DenseBf16Tflops;
    if (runs_cudnn(arch, kernel)) return (backward ? 516.0 : 539.0) / kH100DenseBf16Tflops;
    return fa2;
}

namespace {

// The FlashAttention-3 paper's figures are measurements on an H100 SXM; another device runs them in proportion of
// the best GEMM rates the same sweep measured on both (validation/microbench.csv, mamf-finder: H100 SXM GT0420,
// 794.5 of 989 TFLOP/s). Attention kernels are tensor-core bound as the GEMMs are, and a datasheet peak says
// little of what a part sustains: MI300X reaches 51% of it, GB200 73%, against the H100's 80%. The A100 figure of
// FlashAttention-2 (Ampere and Ada) is that part's own.
constexpr double kH100BestGemmFraction = 794.5 / 989.0;

double h100_figure_share(const DeviceRates& r) {
    if (r.arch == GpuArch::ampere || r.arch == GpuArch::ada) return 1;
    const double best_gemm_fraction = r.ceiling[size_t(Dtype::bf16)];
    return best_gemm_fraction > 0 ? best_gemm_fraction / kH100BestGemmFraction : 1;
}

// Eager attention materialises scores and probabilities: two batched GEMMs and a softmax over heads x T x keys.
void add_eager_attention(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double keys,
                         bool needs_grad) {
    const double heads = double(l.heads) / c.tp;
    add_gemm(w.forward, c, tokens, keys, double(l.head_dim), heads, true);
    add_gemm(w.forward, c, tokens, double(l.head_dim), keys, heads, true);
    if (needs_grad) {
        add_gemm(w.backward, c, tokens, keys, double(l.head_dim), 2 * heads, true);
        add_gemm(w.backward, c, tokens, double(l.head_dim), keys, 2 * heads, true);
        w.backward.gemm_ops += 2;   // each backward above is two batched calls (grad of either operand)
    }
    const double score_bytes = tokens * heads * keys * (c.act_bytes + 4 + 4 + c.act_bytes);   // write, fp32 softmax, cast
    add_memory_bound(w.forward, c, score_bytes, 4);
    if (needs_grad) add_memory_bound(w.backward, c, 2 * score_bytes, 4);
}

// Short sequences run a fused attention kernel below its long-sequence rate: at a fixed 16k tokens per call, each
// (sequence, head, query block) loads its queries and writes its output and softmax statistics once, over fewer
// key blocks, and the causal diagonal's partly masked blocks are a larger share. Shah et al. 2024
// (FlashAttention-3), H100 SXM5, head dim 128, at 512 ... 16k keys: Fig. 5 forward with causal mask, Fig. 6
// backward; as shares of the 16k figure. Other architectures are assumed to follow the H100's shape.
double short_sequence_share(GpuArch arch, AttentionKernel kernel, bool backward, double keys) {
    static constexpr std::array<double, 6> kKeys = {512, 1024, 2048, 4096, 8192, 16384};
    static constexpr std::array<double, 6> kFa2Forward = {191, 260, 298, 319, 333, 335};
    static constexpr std::array<double, 6> kFa2Backward = {214, 260, 291, 310, 318, 322};
    static constexpr std::array<double, 6> kFa3Forward = {292, 423, 521, 579, 602, 616};
    static constexpr std::array<double, 6> kFa3Backward = {316, 424, 501, 542, 559, 561};
    static constexpr std::array<double, 6> kCudnnForward = {315, 410, 484, 518, 529, 539};
    static constexpr std::array<double, 6> kCudnnBackward = {305, 408, 465, 499, 518, 516};
    const auto& t = runs_cudnn(arch, kernel)             ? (backward ? kCudnnBackward : kCudnnForward)
                    : kernel == AttentionKernel::flash3 ? (backward ? kFa3Backward : kFa3Forward)
                                                        : (backward ? kFa2Backward : kFa2Forward);
    if (!(keys > 0) || keys >= kKeys.back()) return 1.0;
    if (keys <= kKeys.front()) return t.front() / t.back();
    size_t i = 1;
    while (kKeys[i] < keys) ++i;
    const double f = std::log2(keys / kKeys[i - 1]);   // the table doubles per step: interpolate in log2(keys)
    return (t[i - 1] + f * (t[i] - t[i - 1])) / t.back();
}

// One rank's fused-attention calls for a sequence of `keys` keys: the keys each call runs over and its share of the
// rank's attention FLOPs. Without context parallelism one call. A load-balanced causal ring (Transformer Engine's
// p2p exchange, AttnFuncWithCPAndKVP2P; PyTorch's pass-KV ring, _templated_ring_attention with load balancing)
// gives each rank two chunks of keys/(2 cp) tokens: the first step is causal attention over its own keys/cp keys,
// each of the cp - 1 later steps half the queries over keys/cp keys or all queries over keys/(2 cp). The ranks step
// together, and at every later step some rank has the keys/(2 cp) block, so each later step runs at that rate.
// The all-gather exchange attends each local chunk to all the keys before it: long calls, counted at `keys`; the
// all-to-all exchange runs one call over the whole sequence for heads/cp of the heads.
struct AttentionCalls {
    double first_keys = 0, first_share = 1;
    double later_keys = 0;   // the cp - 1 later steps (share 1 - first_share)
};

AttentionCalls attention_calls(const WorkContext& c, const LayerSpec& l, double keys) {
    const ParallelSpec& par = c.job.spec.parallel;
    const double cp = double(par.cp);
    AttentionCalls calls{keys, 1, keys};
    const bool ring = par.cp_exchange == ContextParallelExchange::ring || par.cp_exchange == ContextParallelExchange::pass_kv;
    if (cp <= 1 || !ring || l.is_encoder || l.sliding_window > 0) return calls;
    calls.first_keys = keys / cp;
    calls.first_share = 1 / cp;
    calls.later_keys = keys / (2 * cp);
    return calls;
}

// Seconds per FLOP of the fused kernel over these calls, forward or backward.
double attention_seconds_per_flop(const WorkContext& c, const AttentionCalls& calls, double peak, bool backward) {
    if (c.rates.cpu) return 1 / (peak * 0.5);
    const AttentionKernel kernel = c.job.framework.attention_kernel;
    const GpuArch arch = c.rates.arch;
    const double eff = attention_efficiency(arch, kernel, backward) * h100_figure_share(c.rates);
    double per_flop = calls.first_share / (peak * eff * short_sequence_share(arch, kernel, backward, calls.first_keys));
    if (calls.first_share < 1)
        per_flop += (1 - calls.first_share) /
                    (peak * eff * short_sequence_share(arch, kernel, backward, calls.later_keys));
    return per_flop;
}

// A fused attention kernel at its efficiency of the bf16 peak over the keys of its calls.
void add_fused_attention(LayerWork& w, const WorkContext& c, double flops, const AttentionCalls& calls,
                         bool needs_grad) {
    const double peak = c.rates.peak_flops[size_t(Dtype::bf16)] > 0 ? c.rates.peak_flops[size_t(Dtype::bf16)]
                                                                     : c.rates.peak_flops[size_t(c.dt)];
    w.forward.attention_s += flops * attention_seconds_per_flop(c, calls, peak, false) / c.scale[Resource::compute];
    w.forward.flops += flops;
    w.forward.kernels += 1;
    if (needs_grad) {
        const double backward_flops = kAttentionBackwardFlopsFactor * flops;
        w.backward.attention_s +=
            backward_flops * attention_seconds_per_flop(c, calls, peak, true) / c.scale[Resource::compute];
        w.backward.flops += backward_flops;
        w.backward.kernels += 2;
    }
}

}  // namespace

// The attention core of the block; returns its forward FLOPs (selective recompute repeats them).
double add_attention_core(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, double seq,
                          bool needs_grad) {
    const double keys = l.sliding_window > 0 ? std::min(seq, double(l.sliding_window)) : seq;
    const double causal = l.is_encoder ? 1.0 : 0.5;
    const int attention_sets = l.cross_attention ? 2 : 1;
    double forward_flops = 0;
    for (int s = 0; s < attention_sets; ++s) {
        const double flops = 4.0 * tokens * keys * double(l.q_dim()) / c.tp * (s == 1 ? 1.0 : causal);
        forward_flops += flops;
        if (c.job.spec.train.attention == Attention::eager) add_eager_attention(w, l, c, tokens, keys, needs_grad);
        else add_fused_attention(w, c, flops, attention_calls(c, l, keys), needs_grad);
    }
    return forward_flops;
}

}  // namespace ftb
