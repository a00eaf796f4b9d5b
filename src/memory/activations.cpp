#include "memory/activations.hpp"

#include <algorithm>

#include "model/activation.hpp"

namespace ftb {

double norm_saved_per_token(const ModelSpec& m, const Job& job, const TrainingSetup& s, bool weight_trainable) {
    const double h = double(m.hidden);
    if (job.spec.train.compile) {
        // torch.compile (Inductor's default min_cut_rematerialization_partition, torch/_functorch/partitioners.py):
        // pointwise ops whose backward users all fuse are recomputed, reductions are not (ban_recompute_reductions).
        // A norm keeps its input as it arrives and the per-row statistics (fp32 rstd; layer norm also the mean);
        // the fp32 copy and the normalised value eager autograd keeps are recomputed in the backward kernel.
        const double stats_bytes = m.norm == NormKind::layernorm ? 8 : 4;
        return s.bytes.residual * h + stats_bytes;
    }
    if (m.norm == NormKind::layernorm || job.framework.fused_norm) {
        // native_layer_norm / fused RMSNorm save the input and fp32 statistics (mean, rstd). Under autocast
        // layer_norm runs in fp32 (set_stream_dtypes): the input it saves is its fp32 cast of the stream.
        const bool autocast_fp32 = s.bytes.autocast && m.norm == NormKind::layernorm && !job.framework.fused_norm;
        return (autocast_fp32 ? 4 : s.bytes.residual) * h + 8;
    }
    if (!job.framework.rmsnorm_upcast) {
        // RMSNorm in the input dtype (LitGPT lit_gpt/rmsnorm.py at 8641822: x * rsqrt(mean(x * x) + eps), then
        // weight * x_normed): mul keeps x and rsqrt's per-row output in that dtype, and the normalised value
        // only for the weight's gradient.
        const double in = s.bytes.residual;
        return in * h + in + (weight_trainable ? in * h : 0);
    }
    // Eager RMSNorm upcasting to fp32 (HF LlamaRMSNorm): x.float() is saved by pow and mul (4 bytes),
    // rsqrt's fp32 output (4 bytes per token), and the normalised value when the weight trains.
    return 4 * h + 4 + (weight_trainable ? s.bytes.residual * h : 0);
}

namespace {

// Saved bytes per token of the attention core (flash / SDPA keep q, k, v, the output and fp32 log-sum-exp per
// head), with the value kept as the framework hands it over.
double core_attention_saved(const LayerSpec& l, const Job& job, const TrainingSetup& s, double kv) {
    const double q = double(l.q_dim()), act = s.bytes.act, lse = 4.0 * double(l.heads);
    if (!job.framework.qkv_split_views || !s.fused_qkv) return act * (q + 2 * kv + q) + lse;
    // LitGPT lit_gpt/model.py CausalSelfAttention.forward (8641822): q and k pass through apply_rope and
    // torch.cat (new tensors); with n_query_groups == n_head or 1, v is a reshape-view of the permuted qkv output,
    // so the saved value keeps the whole fused output alive; otherwise k and v are expanded to every query head
    // and reshaped (copies of the query width).
    const bool grouped = l.kv_heads > 1 && l.kv_heads < l.heads;
    if (grouped) return act * 4 * q + lse;
    const double kv_width = double(l.kv_dim());
    return act * (q + kv_width + (q + 2 * kv_width) + q) + lse;
}

// OFT's saved inputs per token for `adapters` adapted linears of one input `width` wide, and `keeping` linears that
// keep their own input (a quantised kernel's, or ZeRO-3's before 0.9; OFT's base weights never train). The rotation's
// bmm keeps its input operand (derivatives.yaml bmm: self's gradient needs mat2, mat2's needs self): einsum
// ("...rk,rkc->...rc", PEFT v0.18.1 OFTRotationModule.forward) permutes and reshapes x into a copy per adapter, and
// under autocast the bmm's cast of it. Each adapted base layer then reads its own rotated input: a keeping one keeps
// that copy; the unadapted keeping linears share the plain input (one cast each under autocast).
double oft_inputs(double width, int keeping, int adapters, bool cast_per_call, double mm) {
    const int plain = std::max(keeping - adapters, 0);
    const double plain_kept = plain > 0 ? (cast_per_call ? plain : 1) : 0;
    return (adapters + (keeping > 0 ? std::min(keeping, adapters) : 0) + plain_kept) * mm * width;
}

// Inputs kept by trainable projections and LoRA adapters, per token: {replicated part, tensor-parallel part}.
// Autocast casts an fp32 input per linear call, each cast a new tensor: then every linear keeps its own copy; a
// low-precision input passes through uncast and the linears share it. Only the norms' output can be fp32 (o and
// down read bf16 attention / FFN outputs). Adapters stored in fp32 under autocast always cast their own copy: PEFT
// Linear.forward first converts the input to the adapter's dtype (`x.to(lora_A.weight.dtype)`), and lora_A's
// autocast casts that back.
std::pair<double, double> projection_inputs(const LayerSpec& l, const Job& job, const TrainingSetup& s, bool trainable_weights) {
    const double h = double(l.hidden), q = double(l.q_dim()), i = double(l.ffn_intermediate);
    const double act = s.bytes.act, mm = s.bytes.matmul_in;
    const uint32_t lora = s.adapters ? s.lora_mask : 0;
    const double lora_dropout = job.spec.train.lora.dropout;
    const double r = double(job.spec.train.lora.rank);
    auto group_inputs = [&](double width, int linears_trainable, int adapters, double input_bytes) {
        const bool cast_per_call = s.bytes.autocast && input_bytes >= 4;
        double bytes = 0;
        if (s.oft) return oft_inputs(width, linears_trainable, adapters, cast_per_call, mm);
        if (linears_trainable > 0) bytes += (cast_per_call ? linears_trainable : 1) * mm * width;
        if (adapters > 0) {
            if (lora_dropout > 0) bytes += adapters * (mm + 1) * width;   // dropout output + bool mask each
            else if (s.bytes.autocast) bytes += adapters * mm * width;
            else if (linears_trainable == 0) bytes += mm * width;       // adapters share the input
            bytes += adapters * act * r;                                // lora_A output, kept by lora_B
        }
        return bytes;
    };
    // A frozen linear keeps no input: autograd saves mm's mat1 only for mat2's gradient (derivatives.yaml mm;
    // measured with saved_tensors_hooks, validation/measured/saved-tensors). A quantised one may (profile).
    const bool quantised_keeps = quantised_base(job.spec.train.method) && job.framework.quantized_linear_saves_input;
    // Under DeepSpeed ZeRO-3 before 0.9 every nn.Linear runs LinearFunctionForZeroStage3, which saves its input
    // even for a frozen weight (profile zero3_linear_saves_input); bitsandbytes' 4-bit layers do not call F.linear.
    const bool zero3_keeps = job.spec.parallel.zero >= 3 && job.framework.zero3_linear_saves_input &&
                             !quantised_base(job.spec.train.method);
    const bool keeps_inputs = trainable_weights || quantised_keeps || zero3_keeps;
    const bool fused_qkv = s.fused_qkv;
    const int qkv_linears = fused_qkv ? 1 : 3;
    const int qkv_adapters = fused_qkv ? ((lora & (kQ | kK | kV)) ? 1 : 0)
                                       : !!(lora & kQ) + !!(lora & kK) + !!(lora & kV);
    const int attn_mult = !l.has_attention() ? 0 : l.cross_attention ? 2 : 1;
    double rep = group_inputs(h, keeps_inputs ? qkv_linears : 0, qkv_adapters, s.bytes.norm_out) * attn_mult;
    const bool qkv_partly_adapted = (lora & (kQ | kK | kV)) != 0 && (lora & (kQ | kK | kV)) != (kQ | kK | kV);
    if (fused_qkv && job.framework.lora_qkv_zero_pad && qkv_partly_adapted) {
        // LitGPT LoRAQKVLinear.zero_pad: index_copy keeps its source, the LoRA output of the adapted width.
        const double kvw = double(l.kv_dim());
        const double adapted = (lora & kQ ? q : 0) + (lora & kK ? kvw : 0) + (lora & kV ? kvw : 0);
        rep += act * adapted * attn_mult;
    }
    double tp = group_inputs(q, keeps_inputs ? 1 : 0, (lora & kO) ? 1 : 0, act) * attn_mult;
    // afmoe's output gate: output * sigmoid(gate_proj(x)) keeps sigmoid's output and the attention output (the
    // product's two factors; flash keeps its output anyway) and o_proj reads the product, counted above; the gate's
    // own projection reads the normed input the q/k/v projections keep.
    if (l.attention_output_gate) tp += act * q;
    if (l.ssm == SsmKind::kda) {
        // KDA's q, k, v, b, f_a and g_a read the normed input (one saved tensor); f_b and g_b read the rank-N outputs
        // of f_a and g_a; o_proj reads the gated norm's output. Adapters reach q, k, v and o_proj by name, the gate
        // linears under all-linear.
        const bool gates = (lora & kMixerGates) != 0;   // all-linear
        const int adapters = !!(lora & kQ) + !!(lora & kK) + !!(lora & kV) + (gates ? 3 : 0);
        const double n = double(l.ssm_state), I = double(l.ssm_inner);
        rep += group_inputs(h, keeps_inputs ? 6 : 0, adapters, s.bytes.norm_out);
        rep += 2 * group_inputs(n, keeps_inputs ? 1 : 0, gates ? 1 : 0, act);
        tp += group_inputs(I, keeps_inputs ? 1 : 0, (lora & kO) ? 1 : 0, act);
    } else if (l.ssm != SsmKind::none) {
        // The mixer's in_proj keeps the normed input (an nn.Linear outside the fused function); x_proj, dt_proj and
        // out_proj run inside mamba_inner_fn / mamba_split_conv1d_scan_combined, which keeps what they need
        // (ssm_saved); an adapter on them keeps its own input.
        // Gated DeltaNet's and LFM2's out_proj is a plain nn.Linear after their kernels: it keeps its input itself.
        const double I = double(l.ssm_inner);
        const bool fused_out = l.ssm == SsmKind::mamba1 || l.ssm == SsmKind::mamba2;
        rep += group_inputs(h, keeps_inputs ? 1 : 0, (lora & kSsmIn) ? 1 : 0, s.bytes.norm_out);
        tp += group_inputs(I, !fused_out && keeps_inputs ? 1 : 0, (lora & kSsmOut) ? 1 : 0, act);
        if (l.ssm == SsmKind::mamba1) {
            tp += group_inputs(I, 0, (lora & kSsmX) ? 1 : 0, act);
            tp += group_inputs(double(l.ssm_dt_rank), 0, (lora & kSsmDt) ? 1 : 0, act);
        }
    }
    if (l.ffn_intermediate == 0) return {rep, tp};   // a mixer-only block
    const int up_linears = l.ffn_kind == FfnKind::gated ? 2 : 1;
    const int up_adapters = !!(lora & kUp) + (l.ffn_kind == FfnKind::gated ? !!(lora & kGate) : 0);
    const double experts_per_token = l.experts > 0 ? double(l.experts_per_token) : 1.0;
    if (l.moe_latent > 0) {
        // A latent MoE: fc1_latent_proj keeps the normed input, the experts read its output (the latent copy, an
        // activation), fc2_latent_proj keeps the experts' summed output.
        const double e = double(l.moe_latent);
        const int latent_adapters = (lora & kMoeLatent) ? 1 : 0;
        rep += group_inputs(h, keeps_inputs ? 1 : 0, latent_adapters, s.bytes.norm_out);
        rep += group_inputs(e, keeps_inputs ? up_linears : 0, up_adapters, act) * experts_per_token;
        rep += group_inputs(e, keeps_inputs ? 1 : 0, latent_adapters, act);
    } else {
        rep += group_inputs(h, keeps_inputs ? up_linears : 0, up_adapters, s.bytes.norm_out) * experts_per_token;
    }
    tp += group_inputs(i, keeps_inputs ? 1 : 0, (lora & kDown) ? 1 : 0, act) * experts_per_token;
    if (l.shared_expert_intermediate > 0) {
        // The shared expert (Qwen2MoeSparseMoeBlock.shared_expert, DeepseekV3MoE.shared_experts, Llama4TextMoe
        // .shared_expert) reads every token: its gate and up keep the normed input, its down the product.
        const bool gated = l.ffn_kind == FfnKind::gated;
        const int shared_up = !!(lora & shared_up_bits()) + (gated ? !!(lora & shared_gate_bits()) : 0);
        rep += group_inputs(h, keeps_inputs ? up_linears : 0, shared_up, s.bytes.norm_out);
        tp += group_inputs(double(l.shared_expert_intermediate), keeps_inputs ? 1 : 0, (lora & shared_down_bits()) ? 1 : 0,
                           act);
    }
    return {rep, tp};
}

// Attention core, per token: flash / SDPA keep q, k, v, the output and fp32 log-sum-exp per head; eager keeps the
// score-sized tensors (returned in `scores`, which selective recompute drops).
double attention_saved(const LayerSpec& l, const ModelSpec& m, const Job& job, const TrainingSetup& s, int64_t seq_len,
                       double& scores) {
    const double q = double(l.q_dim()), act = s.bytes.act;
    const Attention attn = job.spec.train.attention;
    // HF's sdpa and eager paths repeat k/v to all query heads (repeat_kv) before attention; flash keeps GQA.
    const double kv = (attn == Attention::flash || job.framework.fused_qkv) ? double(l.kv_dim()) : q;
    double attention = core_attention_saved(l, job, s, kv);
    scores = 0;
    if (attn == Attention::eager) {
        // Eager: QK^T keeps q, k; softmax (upcast to fp32 by HF) keeps its fp32 output; the cast
        // probabilities are kept by the PV matmul with v; no log-sum-exp.
        const double per_row = double(l.heads) * double(l.sliding_window > 0 ? std::min<int64_t>(l.sliding_window, seq_len) : seq_len);
        scores = 4 * per_row + (act < 4 ? act * per_row : 0);
        if (m.attention_dropout > 0) scores += (1 + act) * per_row;   // dropout mask + dropped probabilities
        attention = act * (q + kv) + act * kv + scores;
    }
    const int attn_mult = l.cross_attention ? 2 : 1;
    scores *= attn_mult;
    return attention * attn_mult;
}

// FFN internals, per token (the down projection's input is counted with the projections): plain keeps what its
// activation's backward reads (activation_cost: one tensor for one-op activations, more for xIELU; compiled, the
// pointwise chain is recomputed from its input, the one tensor kept); gated keeps the activation's input, its output and the up projection (both inputs of the
// product need grad). Compiled, the activation's output is recomputed from its input (pointwise, read only by the
// fused product's backward); the product itself stays saved as the down projection's input (a matmul reads it in
// backward: ban_recompute_materialized_backward). A fused SwiGLU (FrameworkProfile::fused_swiglu) saves only its
// input, gate and up, and recomputes silu in backward.
// Bytes per FFN element a plain FFN's activation keeps. A product with a learnable activation parameter takes the
// parameter's dtype: fp32 under torch.amp (fp32 weights), the compute dtype otherwise.
double plain_activation_saved(const ModelSpec& m, const Job& job, const TrainingSetup& s) {
    if (job.spec.train.compile) return s.bytes.act;
    const ActivationCost& a = activation_cost(m.activation);
    const double promoted = s.bytes.autocast ? 4.0 : s.bytes.act;
    return (a.saved_tensors - a.saved_promoted_tensors) * s.bytes.act + a.saved_promoted_tensors * promoted +
           a.saved_mask_bytes;
}

double ffn_saved(const LayerSpec& l, const ModelSpec& m, const Job& job, const TrainingSetup& s) {
    const double i = double(l.ffn_intermediate), act = s.bytes.act;
    const bool gate_recomputed = job.spec.train.compile || job.framework.fused_swiglu;
    // Clamped SwiGLU (LayerSpec::clamped_swiglu) keeps the gate_up output (2 i: both clamps read it), the clamped
    // gate, sigmoid's output, up + 1 and the gated product's other factor: 6 i; compiled, only gate_up's 2 i.
    const double gated_kept = gate_recomputed ? 2 : (l.clamped_swiglu ? 6 : 3);
    // Megatron-Core's SwiGLUFunction keeps `input.to(torch.float8_e4m3fn)` under activation_func_fp8_input_store
    // (megatron/core/fusions/fused_bias_swiglu.py), 1 byte per element of gate and up.
    const bool fp8_input = job.spec.train.activation_func_fp8_input_store && job.framework.fused_swiglu;
    double ffn = l.ffn_kind == FfnKind::gated ? gated_kept * (fp8_input ? 1.0 : act) * i
                                              : plain_activation_saved(m, job, s) * i;
    if (m.ffn_dropout > 0) ffn += 1 * i;
    const double experts_per_token = l.experts > 0 ? double(l.experts_per_token) : 1.0;
    ffn *= experts_per_token;
    if (l.experts > 0) {
        // Router: fp32 logits and softmax over experts; the permuted token copies each expert reads (latent ones
        // under a latent MoE).
        ffn += 8.0 * double(l.experts) + act * double(l.expert_width()) * experts_per_token;
        // The shared expert's activation, as the routed experts' (gated: 3 tensors; plain: the activation's own).
        const double shared_kept = l.ffn_kind == FfnKind::gated ? 3 * act : plain_activation_saved(m, job, s);
        if (l.shared_expert_intermediate > 0) ffn += shared_kept * double(l.shared_expert_intermediate);
    }
    return ffn;
}

// A state-space mixer's saved bytes per token, counted with the attention core's.
// mamba1 (mamba_ssm ops/selective_scan_interface.py MambaInnerFn.forward, checkpoint_lvl 1, the default; transformers'
// MambaMixer and JambaMambaMixer call it in training): xz, the in_proj output (2 I), x_dbl, the x_proj output (R + 2 N;
// B and C are views of it), and out, the gated scan output out_proj reads (I); the convolution's output and delta are
// rebuilt in backward, and the scan's chunk states (fp32, 2 N per channel every 2048 tokens) are left out.
// mamba2 (ops/triton/ssd_combined.py MambaSplitConv1dScanCombinedFn.forward): zxbcdt, the in_proj output
// (2 I + 2 G N + H), out_x, the scan output (I), and the gated norm's fp32 rstd per group; the norm's output, which
// out_proj reads, is rebuilt in backward.
// gated_delta (Qwen3NextGatedDeltaNet.forward with fla and causal-conv1d): causal_conv1d_fn keeps its input, the
// concatenated q, k, v (2 G N + I); ChunkGatedDeltaRuleFunction.forward (fla chunk.py, commit 0315a70e) keeps q and k
// l2-normalised and repeated to the H value heads (2 H N), v as input_guard's contiguous copy (I), A (C = 64 per head,
// k's dtype), g (fp32) and beta per head and the two fp32 l2 rstds; the gated norm keeps its input and z (2 I) and an
// fp32 rstd per head; sigmoid(b) and softplus(a + dt_bias) keep an output and an fp32 input per head.
// short_conv (Lfm2ShortConv.cuda_kernels_forward): the in_proj output B, C, x (3 I; the products B * x and C * y keep
// views of it), causal_conv1d_fn's input B x (I) and the convolution's output, which C * y keeps (I).
double ssm_saved(const LayerSpec& l, const TrainingSetup& s) {
    const double act = s.bytes.act, I = double(l.ssm_inner);
    if (l.ssm == SsmKind::mamba1) return act * (double(l.ssm_in_width()) + double(l.ssm_x_width()) + I);
    if (l.ssm == SsmKind::mamba2)
        return act * (double(l.ssm_in_width()) + I) + (l.ssm_gated_norm ? 4.0 * double(l.ssm_groups) : 0);
    if (l.ssm == SsmKind::gated_delta) {
        const double H = double(l.ssm_heads), N = double(l.ssm_state);
        return act * (double(l.ssm_conv_width()) + 2 * H * N + I + 64 * H + H + 2 * I + H) + 4.0 * 5 * H;
    }
    if (l.ssm == SsmKind::short_conv) return act * 5 * I;
    if (l.ssm == SsmKind::kda) {
        // chunk_kda as chunk_gated_delta_rule above, H = G (no repeat), with g per key channel (fp32, G N) and the
        // gate path kept: f_b's output before fused_kda_gate (I) and the output gate g_b's (I, the gated norm's z).
        const double H = double(l.ssm_heads), GN = double(l.ssm_groups * l.ssm_state);
        return act * (double(l.ssm_conv_width()) + 2 * GN + I + 64 * H + H + 2 * I + I + H) + 4.0 * (GN + 4 * H);
    }
    return 0;
}

// The norms' saved bytes per token. Parallel attention and MLP with two norms of the same input (GPT-NeoX
// use_parallel_residual): a norm that saves its input as-is keeps that one tensor for both (autograd saves the
// tensor, not a copy). (Under autocast a low-precision residual is cast to fp32 per norm call: two copies.)
double norms_saved(const LayerSpec& l, const ModelSpec& m, const Job& job, const TrainingSetup& s, bool trainable_weights) {
    const double h = double(l.hidden);
    double bytes = l.norms * norm_saved_per_token(m, job, s, trainable_weights);
    const bool norm_saves_input_as_is =
        (job.spec.train.compile || m.norm == NormKind::layernorm || job.framework.fused_norm ||
         !job.framework.rmsnorm_upcast) &&
        !(s.bytes.autocast && s.bytes.residual < 4);
    if (l.parallel_attn_mlp && l.norms == 2 && norm_saves_input_as_is) bytes -= s.bytes.residual * h;
    return bytes;
}

}  // namespace

namespace {

// What OFT's Cayley-Neumann transform keeps per block, independent of the tokens (PEFT v0.18.1 OFTRotationModule
// ._cayley_batch with 5 terms, then the einsum): bmm keeps both operands (derivatives.yaml bmm). Without casts that is
// Q, Q^2, Q^3 (Q^4 only feeds an add_) and R for the rotation: 4 tensors of r blocks of b x b, i.e. in x b elements.
// With fp32 adapters under autocast every bmm casts its fp32 operands to bf16, each cast a new tensor: Q twice for
// Q @ Q and once for each of the next two bmm, and R once for the rotation, beside Q^2 and Q^3 (bf16 bmm outputs): 7.
double oft_rotation_saved(const LayerSpec& l, const Job& job, const TrainingSetup& s) {
    const bool fp32_adapter = s.bytes.autocast && s.trainable_storage_bytes >= 4;
    const double tensors = fp32_adapter ? 7 : 4;
    double bytes = 0;
    for (const AdaptedInput& a : adapted_inputs(l, s.lora_mask, s.fused_qkv))
        bytes += double(a.count) * double(a.in_features) * double(oft_block_size_for(job.spec.train.oft, a.in_features));
    return bytes * tensors * s.bytes.act;
}

}  // namespace

LayerActivation layer_activation(const LayerSpec& l, const ModelSpec& m, const Job& job, const TrainingSetup& s,
                                 bool trainable_weights, bool needs_grad, int64_t seq_len) {
    LayerActivation out;
    if (!needs_grad) return out;
    LayerActivationBytes& b = out.per_token;
    b.norms = norms_saved(l, m, job, s, trainable_weights);
    out.layer_input_per_token = s.bytes.residual * double(l.hidden);
    const auto [proj_rep, proj_tp] = projection_inputs(l, job, s, trainable_weights);
    b.projections_in = proj_rep + proj_tp;
    b.attention = l.has_attention() ? attention_saved(l, m, job, s, seq_len, out.scores_per_token) : 0;
    b.attention += ssm_saved(l, s);
    b.ffn = l.ffn_intermediate > 0 || l.experts > 0 ? ffn_saved(l, m, job, s) : 0;
    // Dropout on each sub-layer output before the residual add: a 1-byte mask per element.
    const int sublayers = l.cross_attention ? 3 : 2;
    b.dropout_masks = m.hidden_dropout > 0 ? sublayers * double(l.hidden) : 0;
    out.tp_sharded_per_token = proj_tp + b.attention + b.ffn;   // the tensor-parallel-sharded part
    if (s.oft) out.per_block_bytes = oft_rotation_saved(l, job, s);
    return out;
}

}  // namespace ftb
