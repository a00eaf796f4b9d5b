// The work builder (work_builder.hpp): blocks -> kernels with their time on this device.
#include "timing/work_builder.hpp"

#include "memory/stage_params.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace ftb {

Work& Work::operator+=(const Work& o) {
    matmul_s += o.matmul_s, attention_s += o.attention_s, memory_s += o.memory_s, dequant_s += o.dequant_s;
    kernels += o.kernels, gemm_ops += o.gemm_ops, flops += o.flops;
    return *this;
}

namespace {

Dtype gemm_dtype(Precision p) {
    switch (p) {
        case Precision::fp32: return Dtype::fp32;
        case Precision::tf32: return Dtype::tf32;
        case Precision::fp16: return Dtype::fp16;
        case Precision::bf16: return Dtype::bf16;
        case Precision::fp8: return Dtype::fp8;
    }
    return Dtype::bf16;
}

// Matmul time factor of the framework on this architecture (FrameworkProfile::matmul_time_factor, fitted by
// `ftbound validate --fit-matmul-factor`). An architecture without its own figure runs at 1: a factor fitted on
// one GPU generation is not carried to another without a case that shows it holds.
double matmul_time_factor(const FrameworkProfile& fw, GpuArch arch) {
    for (const auto& [name, f] : fw.matmul_time_factor)
        if (name == to_string(arch)) return f;
    return 1.0;
}

// Dequantising the 4-bit base weights for one use, by the kernels of the library the job names
// (train.qlora.kernel). Bytes per weight element and kernels per dequantised weight:
struct DequantCost {
    double bytes_per_element = 0;   // read + written by the dequantisation kernels
    double issue_factor = 1;        // their time over their memory-bound time (instruction-bound kernels)
    double cast_bytes_per_element = 0;   // a cast of the dequantised weight to the compute dtype (memory-bound)
    double kernels = 0;             // per weight matrix
    bool in_backward = true;        // backward dequantises again (false: the dequantised weight was saved)
};

// bitsandbytes (Linear4bit -> MatMul4Bit, bitsandbytes/autograd/_functions.py): forward runs
// F.dequantize_4bit(B).to(A.dtype) then F.linear; backward dequantises again for grad_A. The kernel
// (csrc/kernels.cu kDequantizeBlockwise, 64 threads x 8 bytes per tile) reads the packed codes (0.5 byte) and one
// fp32 absmax per 64-element block and writes the dequantised weight. With double quantisation
// (compress_statistics) F.dequantize_4bit first runs dequantize_blockwise on the 8-bit absmax and `absmax += offset`
// (two more kernels). When the weight was quantised from another dtype than the compute dtype
// (QuantState.dtype), `.to(A.dtype)` is a cast kernel over the whole weight.
// Until bitsandbytes 0.47 the NF4 code -> value map was a 4-level if-tree per element (dDequantizeNF4): a warp
// of 32 random codes walks every branch, so the kernel is instruction-bound; the branch-free rewrite
// (bitsandbytes PR #1746, merged 2025-09-18, in 0.48) measured "between 1.36x - 2.07x faster" on A100 and H100
// (PR #1747's benchmark, same change). The old kernel is charged the geometric middle, 1.68x its memory time.
inline constexpr double kBnbBranchTreeSlowdown = 1.68;

// auto-gptq int4 QuantLinear (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, v0.5.1, the kernel Qwen's
// finetune.py runs with exllama disabled): for micro-batches of at least kernel_switch_threshold (128) tokens the
// weight is dequantised by PyTorch ops, then torch.matmul: bitwise_right_shift of the int32 words broadcast 8 ways
// (reads 0.5, writes a 4-byte int32 per element), .to(int8) (4 + 1), bitwise_and (1 + 1), minus the zeros (1 + 1),
// times the scales into fp16 (1 + 2): 16.5 bytes per element in 5 kernels (plus 4 small ones on the zeros).
// autograd saves the dequantised weight for backward: no second dequantisation (a recompute repeats it).
DequantCost dequant_cost(const WorkContext& c) {
    const QloraConfig& q = c.job.spec.train.qlora;
    DequantCost d;
    switch (q.kernel) {
        case QloraKernel::auto_gptq:
            d.bytes_per_element = 0.5 + 4 + 4 + 1 + 1 + 1 + 1 + 1 + 1 + 2;
            d.kernels = 5 + 4;
            d.in_backward = false;
            return d;
        case QloraKernel::torchao:
            // torchao NF4Tensor (linear_nf4): the dequantised weight in forward and in backward; torch.compile fuses
            // the lookup and scaling into one memory-bound kernel (the eager op chain is not modelled apart).
            d.bytes_per_element = c.set.quant_bytes_per_param + c.act_bytes;
            d.kernels = 1;
            return d;
        case QloraKernel::bitsandbytes:
        case QloraKernel::bitsandbytes_047: break;
    }
    const std::string& from = c.job.framework.qlora_dequant_dtype;
    const double out_bytes = from == "fp32" ? 4 : 2;
    const double absmax_bytes = q.double_quant ? (1.0 + 4 + 8 + 4) / 64 : 4.0 / 64;   // 8-bit absmax -> fp32, += offset
    d.bytes_per_element = 0.5 + absmax_bytes + out_bytes;
    d.issue_factor = q.kernel == QloraKernel::bitsandbytes_047 ? kBnbBranchTreeSlowdown : 1.0;
    d.kernels = q.double_quant ? 3 : 1;
    if (!from.empty() && from != to_string(c.job.spec.train.precision)) {
        d.cast_bytes_per_element = out_bytes + c.act_bytes;
        d.kernels += 1;
    }
    return d;
}

// One use of `matrices` quantised weights of `elements` in all; one multiply per element (code value x block
// scale) counts in the hardware FLOPs.
void add_dequant(Work& w, const WorkContext& c, const DequantCost& d, double elements, double matrices) {
    const double bytes = d.issue_factor * elements * d.bytes_per_element + elements * d.cast_bytes_per_element;
    w.dequant_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
    w.flops += elements;
    w.kernels += d.kernels * matrices;
}

// Forward dequantisation, and backward's when the library dequantises again for the input gradient.
void add_dequant_uses(LayerWork& w, const WorkContext& c, double elements, double matrices) {
    const DequantCost d = dequant_cost(c);
    add_dequant(w.forward, c, d, elements, matrices);
    if (d.in_backward) add_dequant(w.backward, c, d, elements, matrices);
}

// Forward GEMM, backward dgrad (when the input needs a gradient) and wgrad (when the weight trains).
void add_base_matmuls(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                      bool trains, bool needs_grad) {
    add_gemm(w.forward, c, tokens, out, in, count);
    if (needs_grad) add_gemm(w.backward, c, tokens, in, out, count);   // dgrad
    if (trains) add_gemm(w.backward, c, in, out, tokens, count);       // wgrad
}

// LoRA A (in x r) and B (r x out): forward through both, dgrad through B and A, wgrad of B and A.
void add_lora_matmuls(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count) {
    const double r = double(c.job.spec.train.lora.rank);
    add_gemm(w.forward, c, tokens, r, in, count), add_gemm(w.forward, c, tokens, out, r, count);
    add_gemm(w.backward, c, tokens, in, r, count), add_gemm(w.backward, c, tokens, r, out, count);
    add_gemm(w.backward, c, r, out, tokens, count), add_gemm(w.backward, c, in, r, tokens, count);
}

// Elementwise bytes per token of one adapter call: dropout on its input, the scaling and the add into the base
// output. Adapters stored in fp32 under autocast (train.weights: mixed) first convert their input to fp32 (PEFT
// Linear.forward: `x = x.to(self.lora_A[...].weight.dtype)`, a copy unless it is fp32 already); lora_A's autocast
// casts it back to the compute dtype, and the dropout between runs in fp32. `in_bytes`: the input's element size.
double adapter_elementwise_bytes(const WorkContext& c, double in, double out, double in_bytes) {
    const bool fp32_adapter = c.set.bytes.autocast && c.set.trainable_storage_bytes >= 4;
    const double x_bytes = fp32_adapter ? 4 : c.act_bytes;
    double bytes = 5 * c.act_bytes * out;
    if (fp32_adapter) bytes += ((in_bytes < 4 ? in_bytes + 4 : 0) + 4 + c.act_bytes) * in;
    if (c.job.spec.train.lora.dropout > 0) bytes += (2 * x_bytes + 1) * in;
    return bytes;
}

// A projection of the block (q, k, v, o, or a dense FFN linear), with its adapter and QLoRA dequantisation.
// `in_bytes`: the element size of its input (a norm's output or a low-precision activation).
void add_linear(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                bool adapted, bool trains, bool needs_grad, double in_bytes) {
    add_base_matmuls(w, c, tokens, in, out, count, trains, needs_grad);
    if (adapted) {
        add_lora_matmuls(w, c, tokens, in, out, count);
        const double bytes = adapter_elementwise_bytes(c, in, out, in_bytes);
        add_memory_bound(w.forward, c, tokens * count * bytes, c.compiled ? 1 : 3 * count);
        add_memory_bound(w.backward, c, 2 * tokens * count * bytes, c.compiled ? 1 : 4 * count);
    }
    if (c.job.spec.train.method == Method::qlora) add_dequant_uses(w, c, in * out * count, count);
}

// An expert's linear: it sees its routed tokens; `experts` of them live on this GPU.
void add_expert_linear(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double experts,
                       bool adapted, bool trains, bool needs_grad) {
    add_base_matmuls(w, c, tokens, in, out, experts, trains, needs_grad);
    if (adapted) add_lora_matmuls(w, c, tokens, in, out, experts);
    if (c.job.spec.train.method == Method::qlora) add_dequant_uses(w, c, in * out * experts, experts);
}

// The gradient of a bias that trains: autograd hands the bias the un-reduced output gradient (addmm's `self`
// derivative in pytorch tools/autograd/derivatives.yaml) and sums it over the tokens in a reduction kernel of its
// own (torch/csrc/autograd/engine.cpp validate_outputs -> InputMetadata::reduce_grad -> at::sum_to): one read of
// the tokens x out output gradient per biased linear. The forward add is fused into the GEMM (aten/src/ATen/native/
// Linear.cpp linear(): addmm for 2-D and contiguous 3-D inputs, bias in the cuBLASLt epilogue) and costs nothing.
void add_bias_grad(LayerWork& w, const WorkContext& c, double tokens, double out, double count) {
    add_memory_bound(w.backward, c, tokens * out * count * c.act_bytes, c.compiled ? 0 : count);
}

void add_projections(LayerWork& w, const LayerSpec& l, const WorkContext& c, double tokens, bool trains, bool needs_grad) {
    const double h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim()), i = double(l.ffn_intermediate);
    const double tp = c.tp;
    const uint32_t lora = c.set.adapters ? c.set.lora_mask : 0;
    const double normed = c.set.bytes.norm_out, act = c.act_bytes;
    auto linear = [&](double in, double out, double count, uint32_t bits, double in_bytes, bool bias = false) {
        add_linear(w, c, tokens, in, out, count, lora & bits, trains, needs_grad, in_bytes);
        if (bias && trains) add_bias_grad(w, c, tokens, out, count);
    };
    const int attention_sets = l.cross_attention ? 2 : 1;
    for (int s = 0; s < attention_sets; ++s) {
        if (c.fused_qkv) linear(h, (q + 2 * kv) / tp, 1, kQ | kK | kV, normed, l.qkv_bias);
        else {
            linear(h, q / tp, 1, kQ, normed, l.qkv_bias);
            linear(h, kv / tp, 1, kK, normed, l.qkv_bias);
            linear(h, kv / tp, 1, kV, normed, l.qkv_bias);
        }
        linear(q / tp, h, 1, kO, act, l.o_bias);
    }
    double expert_tokens = tokens, experts_here = 1;
    if (l.experts > 0) {
        const double ep = double(c.job.spec.parallel.ep);
        experts_here = double(l.experts) / ep;
        expert_tokens = tokens * double(l.experts_per_token) * ep / double(l.experts);   // balanced routing
        add_gemm(w.forward, c, tokens, double(l.experts), h);                             // router
        if (needs_grad) add_gemm(w.backward, c, tokens, h, double(l.experts));
        if (trains) add_gemm(w.backward, c, h, double(l.experts), tokens);
    }
    auto expert_linear = [&](double in, double out, uint32_t bits) {
        add_expert_linear(w, c, expert_tokens, in, out, experts_here, lora & bits, trains, needs_grad);
    };
    if (l.ffn_kind == FfnKind::gated) expert_linear(h, i / tp, kGate);
    expert_linear(h, i / tp, kUp);
    expert_linear(i / tp, h, kDown);
    if (l.mlp_bias && l.experts == 0 && trains) {   // a dense FFN's biases (experts' biases are not modelled)
        add_bias_grad(w, c, expert_tokens, i / tp, l.ffn_kind == FfnKind::gated ? 2 : 1);
        add_bias_grad(w, c, expert_tokens, h, 1);
    }
    if (l.shared_expert_intermediate > 0) {
        const double s = double(l.shared_expert_intermediate);
        linear(h, s / tp, 2, kGate | kUp, normed);
        linear(s / tp, h, 1, kDown, act);
    }
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
double short_sequence_share(int kernel_generation, bool backward, double keys) {
    static constexpr std::array<double, 6> kKeys = {512, 1024, 2048, 4096, 8192, 16384};
    static constexpr std::array<double, 6> kFa2Forward = {191, 260, 298, 319, 333, 335};
    static constexpr std::array<double, 6> kFa2Backward = {214, 260, 291, 310, 318, 322};
    static constexpr std::array<double, 6> kFa3Forward = {292, 423, 521, 579, 602, 616};
    static constexpr std::array<double, 6> kFa3Backward = {316, 424, 501, 542, 559, 561};
    const bool fa3 = kernel_generation == 3;
    const auto& t = fa3 ? (backward ? kFa3Backward : kFa3Forward) : (backward ? kFa2Backward : kFa2Forward);
    if (!(keys > 0) || keys >= kKeys.back()) return 1.0;
    if (keys <= kKeys.front()) return t.front() / t.back();
    size_t i = 1;
    while (kKeys[i] < keys) ++i;
    const double f = std::log2(keys / kKeys[i - 1]);   // the table doubles per step: interpolate in log2(keys)
    return (t[i - 1] + f * (t[i] - t[i - 1])) / t.back();
}

// A fused attention kernel at its generation's efficiency of the bf16 peak over `keys` keys per query.
void add_fused_attention(LayerWork& w, const WorkContext& c, double flops, double keys, bool needs_grad) {
    const double peak = c.rates.peak_flops[size_t(Dtype::bf16)] > 0 ? c.rates.peak_flops[size_t(Dtype::bf16)]
                                                                     : c.rates.peak_flops[size_t(c.dt)];
    const int kernel = c.job.framework.attention_kernel;
    const double eff = c.rates.cpu ? 0.5
                                   : attention_efficiency(c.rates.arch, kernel) * short_sequence_share(kernel, false, keys);
    const double eff_backward =
        c.rates.cpu ? 0.5 : attention_efficiency(c.rates.arch, kernel, true) * short_sequence_share(kernel, true, keys);
    w.forward.attention_s += flops / (peak * eff) / c.scale[Resource::compute];
    w.forward.flops += flops;
    w.forward.kernels += 1;
    if (needs_grad) {
        w.backward.attention_s +=
            kAttentionBackwardFlopsFactor * flops / (peak * eff_backward) / c.scale[Resource::compute];
        w.backward.flops += kAttentionBackwardFlopsFactor * flops;
        w.backward.kernels += 2;
    }
}

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
        else add_fused_attention(w, c, flops, keys, needs_grad);
    }
    return forward_flops;
}

// Norms, rotary, residual adds, activation, dropout, autocast casts, MoE permutes: bytes and kernels per token.
void add_block_elementwise(LayerWork& w, const LayerSpec& l, const ModelSpec& m, const WorkContext& c,
                           double tokens, bool needs_grad) {
    const double h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim()), i = double(l.ffn_intermediate);
    const double B = c.act_bytes, R = c.resid_bytes, tp = c.tp;
    double bytes = 0, kernels = 0;
    const bool eager_rms = m.norm == NormKind::rmsnorm && !c.fused_norm && !c.compiled;
    bytes += l.norms * (eager_rms ? (R + 28 + 3 * B) : (R + B)) * h;
    kernels += l.norms * (eager_rms ? 7 : 1);
    const double sublayers = l.parallel_attn_mlp ? 1 : (l.cross_attention ? 3 : 2);
    bytes += sublayers * 3 * R * h;
    kernels += sublayers;
    if (m.position == PositionKind::rotary) {
        const bool fused_rope = c.compiled || c.fused_norm;
        bytes += (fused_rope ? 2 : 7) * B * (q + kv) / tp;
        kernels += fused_rope ? 1 : 10;
    }
    bytes += 2 * B * q / tp;   // attention output layout copy
    kernels += c.compiled ? 0 : 2;
    const double ffn_i = i / tp * (l.experts > 0 ? double(l.experts_per_token) : 1.0);
    if (l.ffn_kind == FfnKind::gated) bytes += (c.compiled ? 3 : 5) * B * ffn_i, kernels += c.compiled ? 1 : 2;
    else bytes += 2 * B * ffn_i, kernels += 1;
    if (m.hidden_dropout > 0) bytes += sublayers * (2 * R + 1) * h, kernels += sublayers;
    if (c.set.bytes.autocast && c.set.bytes.norm_out >= 4) {
        // autocast casts an fp32 norm output to the compute dtype per linear call (a bf16 one passes uncast)
        const double casts = (c.fused_qkv ? 1 : 3) + (l.ffn_kind == FfnKind::gated ? 2 : 1);
        bytes += casts * (c.set.bytes.norm_out + B) * h;
        kernels += c.compiled ? 0 : casts;
    }
    if (l.experts > 0) bytes += 4 * B * h * double(l.experts_per_token), kernels += 6;   // permute / unpermute
    add_memory_bound(w.forward, c, tokens * bytes, kernels);
    if (needs_grad) add_memory_bound(w.backward, c, 2 * tokens * bytes, 2 * kernels);
}

// Full recompute repeats the forward (of train.recompute_layers of the stage's blocks: `share`); selective
// recompute repeats the attention core only; per-op selective AC (torchtitan) repeats every other matmul and the
// elementwise work, not attention.
void set_recompute(LayerWork& w, Recompute mode, double attention_forward_flops, double share) {
    if (mode == Recompute::full) {
        w.recompute = w.forward;
        w.recompute.matmul_s *= share, w.recompute.attention_s *= share, w.recompute.memory_s *= share;
        w.recompute.dequant_s *= share, w.recompute.kernels *= share, w.recompute.flops *= share;
    } else if (mode == Recompute::selective) {
        w.recompute.attention_s = w.forward.attention_s;
        w.recompute.flops = attention_forward_flops;
        w.recompute.kernels = 1;
    } else if (mode == Recompute::op) {
        w.recompute.matmul_s = w.forward.matmul_s / 2;
        w.recompute.memory_s = w.forward.memory_s;
        w.recompute.dequant_s = w.forward.dequant_s;
        w.recompute.flops = (w.forward.flops - attention_forward_flops) / 2;
        w.recompute.kernels = w.forward.kernels;
    }
}

// Output head and loss (last stage): projection to the vocabulary, cross-entropy, final norm.
void add_head_and_loss(Work& fwd, Work& bwd, const WorkContext& c, double tokens) {
    const ModelSpec& m = c.job.model;
    const TrainSpec& tr = c.job.spec.train;
    const double V = double(m.vocab) / c.tp, h = double(m.hidden);
    add_gemm(fwd, c, tokens, V, h);
    add_gemm(bwd, c, tokens, h, V);
    if (c.set.full) add_gemm(bwd, c, h, V, tokens);
    if (tr.method == Method::qlora && c.job.framework.qlora_quantizes_lm_head) {
        // A quantised output head is dequantised per call; a chunked head (LitGPT: lm_head_chunk_size 128 along
        // the sequence, lit_gpt/model.py GPT.forward) is called once per chunk.
        const double chunks = tr.loss == LossImpl::chunked ? std::ceil(tokens / double(tr.micro_batch) / 128) : 1;
        LayerWork head;
        add_dequant_uses(head, c, chunks * V * h, chunks);
        fwd += head.forward, bwd += head.backward;
    }
    double loss_bytes;   // per token, forward + backward
    switch (tr.loss) {
        case LossImpl::fp32_upcast: loss_bytes = 32 * V; break;   // cast, log-softmax, nll and their backward in fp32
        case LossImpl::fused: loss_bytes = 8 * V; break;
        default: loss_bytes = (c.set.bytes.autocast ? 32 : 8 * c.act_bytes) * V; break;
    }
    const double loss_kernels = tr.loss == LossImpl::chunked ? 10 * std::ceil(tokens / 128) : 10;
    add_memory_bound(fwd, c, tokens * loss_bytes / 3, loss_kernels / 2);
    add_memory_bound(bwd, c, tokens * loss_bytes * 2 / 3, loss_kernels / 2);
    add_memory_bound(fwd, c, tokens * (c.resid_bytes + c.act_bytes) * h * 2, 2);   // final norm
    add_memory_bound(bwd, c, tokens * (c.resid_bytes + c.act_bytes) * h * 4, 4);
}

// Embedding lookup (first stage), and its gradient when it trains.
void add_embedding(Work& fwd, Work& bwd, const WorkContext& c, double tokens) {
    const double h = double(c.job.model.hidden);
    add_memory_bound(fwd, c, tokens * (8 + c.resid_bytes * h), 1);
    if (c.set.full && c.set.first_trainable_layer == 0) add_memory_bound(bwd, c, tokens * 8 * h, 2);
}

bool same_shape(const LayerSpec& a, const LayerSpec& b) {
    return a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads && a.head_dim == b.head_dim &&
           a.ffn_intermediate == b.ffn_intermediate && a.experts == b.experts && a.cross_attention == b.cross_attention &&
           a.sliding_window == b.sliding_window && a.norms == b.norms && a.ffn_kind == b.ffn_kind &&
           a.shared_expert_intermediate == b.shared_expert_intermediate && a.is_encoder == b.is_encoder;
}

// FSDP1 (use_orig_params=True) units that hold frozen and trainable weights together: the forward runs on views
// of the unsharded FlatParameter, which requires grad (FlatParamHandle._use_unsharded_views(as_params=False),
// torch/distributed/fsdp/_flat_param.py), so autograd computes the frozen weights' gradients too; the FSDP
// docstring warns such units cost gradient memory "equivalent to not freezing those parameters" (pytorch PR #104967).
bool fsdp_computes_frozen_weight_grads(const WorkContext& c) {
    const ParallelSpec& par = c.job.spec.parallel;
    return c.set.adapters && c.job.framework.fsdp_unit_mixes_frozen && par.zero >= 3 && par.dp > 1;
}

// Those gradients reach the FlatParameter through split_with_sizes' backward, which writes one unit-sized flat
// gradient from the views' gradients (read + write); under no_sync() AccumulateGrad then adds it into the
// unsharded .grad kept from the previous micro-batches (read two, write one) on all but the first micro-batch.
void add_flat_gradient_traffic(Work& bwd, const WorkContext& c, const LayerSpec& l) {
    const double elements = double(l.params()) / c.tp;
    const double ga = double(c.job.spec.grad_accumulation());
    const bool accumulates = ga > 1 && c.job.framework.fsdp_no_sync_accumulation;
    const double accumulate_share = accumulates ? (ga - 1) / ga : 0;
    add_memory_bound(bwd, c, elements * c.set.grad_bytes * (2 + 3 * accumulate_share), 1 + accumulate_share);
}

// FSDP1's post-backward hook on every unit whose gradients sync (torch/distributed/fsdp/_runtime_utils.py
// _post_backward_hook, torch 2.0): the unsharded flat gradient is cast to the reduce dtype
// (`flat_param.grad.to(handle._reduce_dtype)`, read the compute dtype, write the reduce dtype) and the default
// communication hook pre-divides it in place before the reduce-scatter (default_hooks.reduce_scatter_hook:
// `grad.div_(gradient_predivide_factor)`, a factor > 1 for any world size >= 2: read + write). Before that,
// split_with_sizes' backward writes the flat gradient from the views' gradients (read + write in the compute
// dtype), unless add_flat_gradient_traffic counted it already. Under no_sync() only the last micro-batch syncs.
// `elements`: the unit's parameters on this GPU before sharding (a block, or the root unit's embedding and head).
void add_fsdp1_post_backward_traffic(Work& bwd, const WorkContext& c, double elements, bool flat_write_counted) {
    const double ga = double(c.job.spec.grad_accumulation());
    const double sync_share = ga > 1 && c.job.framework.fsdp_no_sync_accumulation ? 1 / ga : 1;
    const double grad_compute = c.set.bytes.weight_compute, grad_reduce = c.set.reduce_bytes;
    const double flat_write = flat_write_counted ? 0 : 2 * grad_compute;
    const bool casts = grad_reduce != grad_compute;
    const double cast = casts ? grad_compute + grad_reduce : 0;
    const double predivide = 2 * grad_reduce;
    // A reduce dtype below the sharded parameter's: the reduced shard is cast back to it for the optimizer
    // (_runtime_utils.py _cast_grad_to_param_dtype, read the reduce dtype, write the parameter's), 1/dp of the unit.
    const double dp = double(c.job.spec.parallel.dp);
    const bool casts_back = grad_reduce < c.set.grad_bytes;
    const double cast_back = casts_back ? (grad_reduce + c.set.grad_bytes) / dp : 0;
    add_memory_bound(bwd, c, elements * (flat_write + sync_share * (cast + predivide + cast_back)),
                     1 + sync_share * ((casts ? 1 : 0) + 1 + (casts_back ? 1 : 0)));
}

bool fsdp1_unit_gradients(const WorkContext& c, bool trains) {
    const ParallelSpec& par = c.job.spec.parallel;
    return trains && c.job.framework.fsdp1_flat_gradients && par.zero >= 3 && par.dp > 1;
}

// The per-block host overhead is the forward's Python (module calls and their bookkeeping); full and per-op
// recompute run each recomputed block's forward again (torch.utils.checkpoint re-enters the module's forward).
double forward_reruns_per_block(const Job& job) {
    const TrainSpec& tr = job.spec.train;
    if (tr.recompute != Recompute::full && tr.recompute != Recompute::op) return 0;
    const double stage_blocks = std::ceil(double(job.model.num_layers()) / double(job.spec.parallel.pp));
    return tr.recompute_layers > 0 ? std::min(1.0, double(tr.recompute_layers) / stage_blocks) : 1.0;
}

// One stage's blocks [first, last), plus head or embedding where the stage holds them.
StageWork stage_work(const WorkContext& c, const MicroBatchShape& shape, int64_t stage, int64_t first, int64_t last) {
    const ModelSpec& m = c.job.model;
    const int64_t pp = c.job.spec.parallel.pp;
    StageWork s;
    LayerWork cached;
    const LayerSpec* prev = nullptr;
    bool prev_trains = false, prev_grad = false;
    const bool frozen_wgrads = fsdp_computes_frozen_weight_grads(c);
    for (int64_t li = first; li < last; ++li) {
        const LayerSpec& l = m.layers[size_t(li)];
        const bool trains = (c.set.full && li >= c.set.first_trainable_layer) || frozen_wgrads;
        const bool needs_grad = c.set.adapters || li >= c.set.first_trainable_layer;
        // Blocks of one shape and role cost the same: build each distinct block once.
        if (!prev || !same_shape(*prev, l) || trains != prev_trains || needs_grad != prev_grad) {
            cached = layer_work(l, m, c, shape.tokens_per_gpu, shape.compute_seq, trains, needs_grad);
            if (frozen_wgrads) add_flat_gradient_traffic(cached.backward, c, l);
            if (fsdp1_unit_gradients(c, trains)) add_fsdp1_post_backward_traffic(cached.backward, c, double(l.params()) / c.tp, frozen_wgrads);
        }
        prev = &l, prev_trains = trains, prev_grad = needs_grad;
        s.forward += cached.forward, s.backward += cached.backward, s.recompute += cached.recompute;
        s.attention_forward_s += cached.forward.attention_s, s.attention_backward_s += cached.backward.attention_s;
        s.layer_forward_s.push_back(cached.forward.gpu_seconds());
        s.layer_backward_s.push_back(cached.backward.gpu_seconds() + cached.recompute.gpu_seconds());
    }
    if (stage == pp - 1) add_head_and_loss(s.forward, s.backward, c, shape.tokens_per_gpu);
    if (stage == 0) add_embedding(s.forward, s.backward, c, shape.tokens_per_gpu);
    // The root FSDP unit holds what no block holds: the embeddings and an untied head.
    if (fsdp1_unit_gradients(c, c.set.full && c.set.first_trainable_layer == 0)) {
        const double root = (stage == 0 ? double(m.embedding_params()) : 0) + (stage == pp - 1 ? double(m.lm_head_params()) : 0);
        if (root > 0) add_fsdp1_post_backward_traffic(s.backward, c, root / c.tp, false);
    }
    s.gpu_s = s.forward.gpu_seconds() + s.backward.gpu_seconds() + s.recompute.gpu_seconds();
    const double blocks = double(last - first);
    const double per_kernel_s = host_seconds_per_kernel(c.job, c.scale);
    const double per_block_s = c.job.framework.host_overhead_per_block_us * 1e-6 / c.scale[Resource::launch_overhead];
    // Each block is one FSDP unit (auto-wrap by block): half its hook work runs in the forward, half in backward.
    const double per_unit_s = c.job.spec.parallel.zero >= 3 && c.job.spec.parallel.dp > 1
                                  ? c.job.framework.host_overhead_per_fsdp_unit_us * 1e-6 / c.scale[Resource::launch_overhead]
                                  : 0;
    const double host_forward_s = s.forward.kernels * per_kernel_s + blocks * (per_block_s + per_unit_s / 2);
    const double host_backward_s = (s.backward.kernels + s.recompute.kernels) * per_kernel_s +
                                   blocks * (forward_reruns_per_block(c.job) * per_block_s + per_unit_s / 2);
    s.host_issue_s = host_forward_s + host_backward_s;
    // A CPU runs each op on the thread that dispatched it: the per-op host time adds to the op's own time, and so
    // does the wait of each GEMM call for the cores when the BLAS's thread pool and OpenMP's take turns (probed).
    const DeviceSpec& dev = c.job.system.device;
    if (c.job.system.cpu_only && dev.blas_switch_us > 0)
        s.pool_switch_s = (s.forward.gemm_ops + s.backward.gemm_ops + s.recompute.gemm_ops) * dev.blas_switch_us * 1e-6 /
                          c.scale[Resource::launch_overhead];
    // On a GPU the stream runs no further ahead than the host has issued, phase by phase: the forward's kernels are
    // issued by Python, the backward's by autograd's engine once the forward has been issued. A host-bound forward
    // followed by a GPU-bound backward costs the host's forward plus the GPU's backward.
    const double gpu_backward_s = s.backward.gpu_seconds() + s.recompute.gpu_seconds();
    s.wall_s = c.job.system.cpu_only ? s.gpu_s + s.host_issue_s + s.pool_switch_s
                                     : std::max(host_forward_s, s.forward.gpu_seconds()) +
                                           std::max(host_backward_s, gpu_backward_s);
    return s;
}

}  // namespace

WorkContext make_work_context(const Job& job, const TrainingSetup& set, const DeviceRates& rates,
                              const ResourceScale& scale) {
    const TrainSpec& tr = job.spec.train;
    return WorkContext{job, set, rates, scale, gemm_dtype(tr.precision), double(job.spec.parallel.tp),
                       set.bytes.act, set.bytes.residual, tr.compile, job.framework.fused_norm, set.fused_qkv,
                       job.system.cpu_only ? 1.0 : 1.0 / matmul_time_factor(job.framework, rates.arch)};
}

void add_gemm(Work& w, const WorkContext& c, double m, double n, double k, double count, bool batched) {
    if (m < 1 || n < 1 || k < 1 || count <= 0) return;
    const GemmEstimate e = gemm_estimate(int64_t(std::ceil(m)), int64_t(std::ceil(n)), int64_t(std::ceil(k)), c.dt, c.rates);
    if (e.memory_bound) w.memory_s += count * e.seconds / c.scale[Resource::memory_bandwidth];
    else w.matmul_s += count * e.seconds / (c.scale[Resource::compute] * c.sustained);
    w.kernels += count;
    w.gemm_ops += batched ? 1 : count;
    w.flops += 2.0 * m * n * k * count;
}

void add_memory_bound(Work& w, const WorkContext& c, double bytes, double kernels) {
    w.memory_s += memory_bound_seconds(bytes, c.rates) / c.scale[Resource::memory_bandwidth];
    w.kernels += kernels;
}

// FlashAttention-2 reaches "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023, FlashAttention-2,
// abstract) and is "around 2x faster than FlashAttention" (same abstract); one figure for forward and backward.
// On H100 SXM5 (989 dense bf16 TFLOP/s), head dim 128, sequence 16k (Shah et al. 2024, FlashAttention-3, Fig. 5
// forward with causal mask, Fig. 6 backward): FlashAttention-2 335 TFLOP/s forward, 322 backward;
// FlashAttention-3 616 forward, 561 backward. The backward panels are without the causal mask (the paper has no
// causal backward figure).
double attention_efficiency(GpuArch arch, int kernel_generation, bool backward) {
    constexpr double kH100DenseBf16Tflops = 989.4;   // NVIDIA H100 datasheet, SXM, dense
    const bool hopper_or_newer = arch == GpuArch::hopper || arch == GpuArch::blackwell;
    double fa2 = 0.35;   // "only 35% utilization on the H100" (FlashAttention-3 abstract): other architectures
    if (arch == GpuArch::ampere || arch == GpuArch::ada) fa2 = 0.6;   // middle of the 50-73% range
    if (hopper_or_newer) fa2 = (backward ? 322.0 : 335.0) / kH100DenseBf16Tflops;
    if (kernel_generation == 1) return fa2 / 2;
    if (kernel_generation == 3 && hopper_or_newer) return (backward ? 561.0 : 616.0) / kH100DenseBf16Tflops;
    return fa2;
}

LayerWork layer_work(const LayerSpec& l, const ModelSpec& m, const WorkContext& c, double tokens, double seq,
                     bool trains, bool needs_grad) {
    LayerWork out;
    add_projections(out, l, c, tokens, trains, needs_grad);
    const double attention_forward_flops = add_attention_core(out, l, c, tokens, seq, needs_grad);
    add_block_elementwise(out, l, m, c, tokens, needs_grad);
    if (!needs_grad) {
        out.backward = Work{};
        return out;
    }
    const TrainSpec& tr = c.job.spec.train;
    const double stage_blocks = std::ceil(double(m.num_layers()) / double(c.job.spec.parallel.pp));
    const double share = tr.recompute_layers > 0 ? std::min(1.0, double(tr.recompute_layers) / stage_blocks) : 1.0;
    set_recompute(out, tr.recompute, attention_forward_flops, share);
    return out;
}

// Padded batches run on the longest sequence of the batch (JobSpec::expected_padded_seq_len).
MicroBatchShape micro_batch_shape(const Job& job) {
    MicroBatchShape s;
    s.real_tokens_per_seq = job.spec.real_tokens_per_sequence();
    s.compute_seq = job.spec.expected_padded_seq_len();
    s.tokens_per_gpu = double(job.spec.train.micro_batch) * s.compute_seq / double(job.spec.parallel.cp);
    return s;
}

double host_seconds_per_kernel(const Job& job, const ResourceScale& scale) {
    // A CPU with its PyTorch per-op time measured (the probed system file's op_overhead_us) pays that per op.
    if (job.system.cpu_only && job.system.device.op_overhead_us > 0)
        return job.system.device.op_overhead_us * 1e-6 / scale[Resource::launch_overhead];
    return (kKernelLaunchHostSeconds + job.framework.host_overhead_per_kernel_us * 1e-6) / scale[Resource::launch_overhead];
}

namespace {

// The stages that can set the pace: the first (embedding, most blocks under the plain split), the last (head and
// loss) and, when the embedding and the head count as layers, a middle stage (the most blocks).
std::vector<int64_t> pacing_stages(const ParallelSpec& par) {
    if (par.pp <= 1) return {0};
    if (par.pp_edges_as_layers && par.pp > 2) return {0, 1, par.pp - 1};
    return {0, par.pp - 1};
}

}  // namespace

StageWork critical_stage_work(const WorkContext& c, const MicroBatchShape& shape) {
    const ParallelSpec& par = c.job.spec.parallel;
    const int64_t L = int64_t(c.job.model.num_layers());
    StageWork best;
    double first_flops = 0, middle_flops = -1, last_flops = 0;
    bool have = false;
    for (const int64_t stage : pacing_stages(par)) {
        const StageSplit sp = stage_split(L, par.pp, stage, par.pp_edges_as_layers);
        StageWork s = stage_work(c, shape, stage, sp.first, sp.last);
        const double flops = s.forward.flops + s.backward.flops + s.recompute.flops;
        (stage == 0 ? first_flops : stage == par.pp - 1 ? last_flops : middle_flops) = flops;
        // wall_s is the micro-batch as the stream sees it (on a CPU: ops and their dispatch, one after the other).
        if (!have || s.wall_s > std::max(best.gpu_s, best.wall_s)) {
            best = std::move(s);
            have = true;
        }
    }
    best.first_stage_flops = first_flops;
    best.last_stage_flops = last_flops;
    // Stages in between are like the first under the plain split (embedding lookups cost little).
    best.middle_stage_flops = middle_flops >= 0 ? middle_flops : first_flops;
    return best;
}

}  // namespace ftb
