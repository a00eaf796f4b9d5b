// The work builder (work_builder.hpp): blocks -> kernels with their time on this device.
#include "timing/work_builder.hpp"

#include "memory/stage_params.hpp"
#include "model/activation.hpp"
#include "timing/adapter_work.hpp"
#include "timing/eager_host.hpp"
#include "timing/fp8_casts.hpp"
#include "timing/fsdp2_copies.hpp"
#include "timing/fsdp_gradient_traffic.hpp"
#include "timing/host_issue.hpp"
#include "timing/qlora_dequant.hpp"
#include "timing/ssm_work.hpp"

#include <algorithm>
#include <optional>
#include <array>
#include <cmath>

namespace ftb {

namespace {

// Forward GEMM, backward dgrad (when the input needs a gradient) and wgrad (when the weight trains).
void add_base_matmuls(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                      bool trains, bool needs_grad) {
    add_gemm(w.forward, c, tokens, out, in, count);
    if (needs_grad) add_gemm(w.backward, c, tokens, in, out, count);   // dgrad
    if (trains) add_gemm(w.backward, c, in, out, tokens, count);       // wgrad
}

// A projection of the block (q, k, v, o, or a dense FFN linear), with its adapter and QLoRA dequantisation.
// `in_bytes`: the element size of its input (a norm's output or a low-precision activation).
void add_linear(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double count,
                bool adapted, bool trains, bool needs_grad, double in_bytes, bool quantised = true) {
    add_base_matmuls(w, c, tokens, in, out, count, trains, needs_grad);
    if (adapted) add_adapter_work(w, c, tokens, in, out, count, in_bytes, true);
    if (quantised && quantised_base(c.job.spec.train.method))
        add_dequant_uses(w, c, in * out * count, count, tokens * (in + out) * count);
}

// An expert's linear: it sees its routed tokens; `experts` of them live on this GPU.
void add_expert_linear(LayerWork& w, const WorkContext& c, double tokens, double in, double out, double experts,
                       bool adapted, bool trains, bool needs_grad) {
    add_base_matmuls(w, c, tokens, in, out, experts, trains, needs_grad);
    if (adapted) add_adapter_work(w, c, tokens, in, out, experts, c.act_bytes, false);
    if (quantised_base(c.job.spec.train.method))
        add_dequant_uses(w, c, in * out * experts, experts, tokens * (in + out) * experts);
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
    // A block without adapters under qlora_unadapted_attention_unquantised keeps plain attention linears (stage_params).
    const bool plain_attention = c.set.unadapted_block && c.job.framework.qlora_unadapted_attention_unquantised;
    auto linear = [&](double in, double out, double count, uint32_t bits, double in_bytes, bool bias = false) {
        const bool quantised = !(plain_attention && (bits & (kQ | kK | kV | kO)));
        add_linear(w, c, tokens, in, out, count, lora & bits, trains, needs_grad, in_bytes, quantised);
        if (bias && trains) add_bias_grad(w, c, tokens, out, count);
    };
    const int attention_sets = !l.has_attention() ? 0 : l.cross_attention ? 2 : 1;
    for (int s = 0; s < attention_sets; ++s) {
        if (c.fused_qkv) linear(h, (q + 2 * kv) / tp, 1, kQ | kK | kV, normed, l.qkv_bias);
        else {
            linear(h, q / tp, 1, kQ, normed, l.qkv_bias);
            linear(h, kv / tp, 1, kK, normed, l.qkv_bias);
            linear(h, kv / tp, 1, kV, normed, l.qkv_bias);
        }
        linear(q / tp, h, 1, kO, act, l.o_bias);
        if (l.attention_output_gate) linear(h, q / tp, 1, kGate, normed);   // afmoe self_attn.gate_proj
    }
    // The mixer's in_proj (Gated DeltaNet: in_proj_qkvz and in_proj_ba as one), (mamba1: x_proj, dt_proj,) out_proj;
    // heads split under TP
    if (l.ssm == SsmKind::kda) {   // every KDA linear split by heads, but f_a and g_a (vLLM: ReplicatedLinear)
        for (const MixerLinear& x : kda_linears(l))
            linear(x.row_parallel ? double(x.in) / tp : double(x.in),
                   x.row_parallel || x.replicated ? double(x.out) : double(x.out) / tp, 1, x.bits,
                   x.reads_norm ? normed : act);
    } else if (l.ssm != SsmKind::none) {
        const double I = double(l.ssm_inner) / tp;
        linear(h, double(l.ssm_in_width()) / tp, 1, kSsmIn, normed, l.ssm_proj_bias);
        if (l.ssm == SsmKind::mamba1) {
            linear(I, double(l.ssm_x_width()), 1, kSsmX, act);
            linear(double(l.ssm_dt_rank), I, 1, kSsmDt, act, true);
        }
        linear(I, h, 1, kSsmOut, act, l.ssm_proj_bias);
    }
    if (l.ffn_intermediate == 0) return;   // Mamba's blocks and Nemotron-H's mixer blocks have no FFN
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
    const double e = double(l.expert_width());   // a latent MoE's experts run in the latent (fc1 / fc2_latent_proj)
    if (l.moe_latent > 0) linear(h, e, 1, kMoeLatent, normed), linear(e, h, 1, kMoeLatent, act);
    if (l.ffn_kind == FfnKind::gated) expert_linear(e, i / tp, kGate);
    expert_linear(e, i / tp, kUp);
    expert_linear(i / tp, e, kDown);
    if (l.mlp_bias && trains) {   // the FFN's biases; each local expert's over the tokens routed to it (gpt_oss)
        add_bias_grad(w, c, expert_tokens, i / tp, (l.ffn_kind == FfnKind::gated ? 2 : 1) * experts_here);
        add_bias_grad(w, c, expert_tokens, e, experts_here);
    }
    if (l.shared_expert_intermediate > 0) {
        const double s = double(l.shared_expert_intermediate);
        // gate and up as one pair of GEMMs when both or neither carry an adapter (a target of shared_expert.up_proj
        // alone adapts one of them); a plain shared expert (Nemotron-H) has up alone.
        if (l.ffn_kind != FfnKind::gated) {
            linear(h, s / tp, 1, shared_up_bits(), normed);
        } else if (!(lora & shared_gate_bits()) == !(lora & shared_up_bits())) {
            linear(h, s / tp, 2, shared_gate_bits() | shared_up_bits(), normed);
        } else {
            linear(h, s / tp, 1, shared_gate_bits(), normed);
            linear(h, s / tp, 1, shared_up_bits(), normed);
        }
        linear(s / tp, h, 1, shared_down_bits(), act);
    }
}


// A plain FFN's activation, per token: one fused kernel compiled (reads its input, writes its output), else the
// eager kernels and traffic of activation_cost (one kernel for one-op activations).
void add_plain_activation(const ModelSpec& m, const WorkContext& c, double ffn_i, double& bytes, double& kernels) {
    if (c.compiled) {
        bytes += 2 * c.act_bytes * ffn_i, kernels += 1;
        return;
    }
    const ActivationCost& a = activation_cost(m.activation);
    bytes += (a.act_traffic * c.act_bytes + a.mask_traffic) * ffn_i;
    kernels += a.kernels;
}

// Megatron-Core's fused SwiGLU under activation_func_fp8_input_store (memory/activations.cpp ffn_saved): `input.to(
// torch.float8_e4m3fn)` in the forward and `input.to(ctx.ori_input_dtype)` in the backward are kernels of their own
// (megatron/core/fusions/fused_bias_swiglu.py SwiGLUFunction).
bool stores_swiglu_input_in_fp8(const LayerSpec& l, const WorkContext& c) {
    return c.job.spec.train.activation_func_fp8_input_store && c.job.framework.fused_swiglu &&
           l.ffn_kind == FfnKind::gated && l.ffn_intermediate > 0;
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
    // A block holds one residual add per sub-layer: a mixer (attention, a state-space mixer or both side by side,
    // Falcon-H1) and an FFN, either of which a hybrid block may lack.
    const double sublayers = l.ssm != SsmKind::none || !l.has_attention()
                                 ? double(l.ffn_intermediate > 0) + double(l.ssm != SsmKind::none || l.has_attention())
                                 : l.parallel_attn_mlp ? 1 : (l.cross_attention ? 3 : 2);
    bytes += sublayers * 3 * R * h;
    kernels += sublayers;
    if (m.position == PositionKind::rotary && l.has_attention()) {
        const bool fused_rope = c.compiled || c.fused_norm;
        bytes += (fused_rope ? 2 : 7) * B * (q + kv) / tp;
        kernels += fused_rope ? 1 : 10;
    }
    bytes += 2 * B * q / tp;   // attention output layout copy
    kernels += c.compiled || !l.has_attention() ? 0 : 2;
    const double ffn_i = i / tp * (l.experts > 0 ? double(l.experts_per_token) : 1.0);
    if (l.ffn_intermediate == 0) {
    } else if (l.ffn_kind == FfnKind::gated) bytes += (c.compiled ? 3 : 5) * B * ffn_i, kernels += c.compiled ? 1 : 2;
    else add_plain_activation(m, c, ffn_i, bytes, kernels);
    if (m.hidden_dropout > 0) bytes += sublayers * (2 * R + 1) * h, kernels += sublayers;
    if (c.set.bytes.autocast && c.set.bytes.norm_out >= 4) {
        // autocast casts an fp32 norm output to the compute dtype per linear call (a bf16 one passes uncast)
        double casts = (c.fused_qkv ? 1 : 3) + (l.ffn_kind == FfnKind::gated ? 2 : 1);
        if (l.ssm != SsmKind::none || !l.has_attention())   // a hybrid block: the linears it has that read the norm
            casts = (l.has_attention() ? (c.fused_qkv ? 1 : 3) : 0) + (l.ssm == SsmKind::kda ? 6 : l.ssm != SsmKind::none ? 1 : 0) +
                    (l.ffn_intermediate > 0 ? (l.ffn_kind == FfnKind::gated ? 2 : 1) : 0);
        bytes += casts * (c.set.bytes.norm_out + B) * h;
        kernels += c.compiled ? 0 : casts;
    }
    if (l.experts > 0)   // permute / unpermute (of the latent under a latent MoE)
        bytes += 4 * B * double(l.expert_width()) * double(l.experts_per_token), kernels += 6;
    add_memory_bound(w.forward, c, tokens * bytes, kernels);
    if (needs_grad) add_memory_bound(w.backward, c, 2 * tokens * bytes, 2 * kernels);
    if (needs_grad && stores_swiglu_input_in_fp8(l, c)) {
        // The cast of gate and up to fp8 after the forward's SwiGLU, and back before its backward.
        const double cast_bytes = tokens * (B + 1) * 2 * ffn_i;
        add_memory_bound(w.forward, c, cast_bytes, 1);
        add_memory_bound(w.backward, c, cast_bytes, 1);
    }
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
    // fp8 training leaves the output head in bf16: Megatron-Core's output_layer is a tensor_parallel
    // ColumnParallelLinear, not a Transformer Engine module (megatron/core/models/gpt/gpt_model.py), so
    // fp8_autocast does not reach it; torchtitan converts every nn.Linear but "output" (torchtitan/float8.py
    // convert_to_float8_training(..., module_filter_fn=lambda mod, fqn: fqn != "output")).
    WorkContext hc = c;
    if (hc.dt == Dtype::fp8) hc.dt = Dtype::bf16;
    add_gemm(fwd, hc, tokens, V, h);
    add_gemm(bwd, hc, tokens, h, V);
    if (c.set.head_trains()) add_gemm(bwd, hc, h, V, tokens);
    if (quantised_base(tr.method) && c.job.framework.qlora_quantizes_lm_head) {
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
    if (c.set.embedding_trains()) add_memory_bound(bwd, c, tokens * 8 * h, 2);
}

// The same context over another setup (one block's: block_setup).
WorkContext with_setup(const WorkContext& c, const TrainingSetup& set) {
    return WorkContext{c.job, set, c.rates, c.scale, c.dt, c.tp, c.act_bytes, c.resid_bytes, c.compiled, c.fused_norm,
                       c.fused_qkv, c.sustained};
}

bool same_shape(const LayerSpec& a, const LayerSpec& b) {
    return a.hidden == b.hidden && a.heads == b.heads && a.kv_heads == b.kv_heads && a.head_dim == b.head_dim &&
           a.ffn_intermediate == b.ffn_intermediate && a.experts == b.experts && a.cross_attention == b.cross_attention &&
           a.sliding_window == b.sliding_window && a.norms == b.norms && a.ffn_kind == b.ffn_kind &&
           a.shared_expert_intermediate == b.shared_expert_intermediate && a.moe_latent == b.moe_latent &&
           a.is_encoder == b.is_encoder &&
           a.ssm == b.ssm && a.ssm_inner == b.ssm_inner && a.ssm_state == b.ssm_state && a.ssm_heads == b.ssm_heads;
}

// Tensors outside the blocks that full fine-tuning gives a gradient: the embedding (first stage), the final norm
// and an untied output head (last stage).
double edge_grad_tensors(const WorkContext& c, int64_t stage) {
    if (!c.set.embedding_trains()) return 0;
    const ModelSpec& m = c.job.model;
    double tensors = stage == 0 ? 1 : 0;
    if (stage == c.job.spec.parallel.pp - 1) tensors += 1 + (m.tie_word_embeddings ? 0 : 1);
    return tensors;
}

// One stage's blocks [first, last), plus head or embedding where the stage holds them.
StageWork stage_work(const WorkContext& c, const MicroBatchShape& shape, int64_t stage, int64_t first, int64_t last) {
    const ModelSpec& m = c.job.model;
    const int64_t pp = c.job.spec.parallel.pp;
    StageWork s;
    LayerWork cached;
    const LayerSpec* prev = nullptr;
    bool prev_trains = false, prev_grad = false, prev_outside = false;
    double grad_tensors = 0;
    const bool frozen_wgrads = fsdp_computes_frozen_weight_grads(c);
    for (int64_t li = first; li < last; ++li) {
        const LayerSpec& l = m.layers[size_t(li)];
        const bool trains = c.set.block_trains(li) || frozen_wgrads;
        const bool needs_grad = c.set.block_needs_grad(li);
        const bool outside = c.set.outside(li);   // train.blocks leaves it out: no adapters
        std::optional<TrainingSetup> scratch;   // a copy only where some blocks are outside the trained part
        const WorkContext bc = with_setup(c, c.set.blocks_limited() ? block_setup(c.set, li, scratch.emplace()) : c.set);
        // Blocks of one shape and role cost the same: build each distinct block once.
        if (!prev || !same_shape(*prev, l) || trains != prev_trains || needs_grad != prev_grad || outside != prev_outside) {
            cached = layer_work(l, m, bc, shape.tokens_per_gpu, shape.compute_seq, trains, needs_grad);
            if (frozen_wgrads) add_flat_gradient_traffic(cached.backward, c, l);
            if (fsdp1_unit_gradients(c, trains)) add_fsdp1_post_backward_traffic(cached.backward, c, double(l.params()) / c.tp, frozen_wgrads);
            if (fsdp2_unit_copies(c)) add_fsdp2_unit_copies(cached.forward, cached.backward, c, double(l.params()) / c.tp, trains);
        }
        prev = &l, prev_trains = trains, prev_grad = needs_grad, prev_outside = outside;
        if (needs_grad) grad_tensors += block_grad_tensors(l, bc, c.set.block_trains(li));
        s.forward += cached.forward, s.backward += cached.backward, s.recompute += cached.recompute;
        s.attention_forward_s += cached.forward.attention_s, s.attention_backward_s += cached.backward.attention_s;
        s.layer_forward_s.push_back(cached.forward.gpu_seconds());
        s.layer_backward_s.push_back(cached.backward.gpu_seconds() + cached.recompute.gpu_seconds());
    }
    if (stage == pp - 1) add_head_and_loss(s.forward, s.backward, c, shape.tokens_per_gpu);
    if (stage == 0) add_embedding(s.forward, s.backward, c, shape.tokens_per_gpu);
    grad_tensors += edge_grad_tensors(c, stage);
    // The root FSDP unit holds what no block holds: the embeddings and an untied head.
    if (fsdp1_unit_gradients(c, c.set.embedding_trains())) {
        const double root = (stage == 0 ? double(m.embedding_params()) : 0) + (stage == pp - 1 ? double(m.lm_head_params()) : 0);
        if (root > 0) add_fsdp1_post_backward_traffic(s.backward, c, root / c.tp, false);
    }
    if (fsdp2_unit_copies(c) && c.job.framework.fsdp2_root_unit) {
        const double root = (stage == 0 ? double(m.embedding_params()) : 0) + (stage == pp - 1 ? double(m.lm_head_params()) : 0);
        if (root > 0) add_fsdp2_unit_copies(s.forward, s.backward, c, root / c.tp, c.set.embedding_trains());
    }
    s.gpu_s = s.forward.gpu_seconds() + s.backward.gpu_seconds() + s.recompute.gpu_seconds();
    add_host_issue(s, c, double(last - first), grad_tensors);
    return s;
}

}  // namespace

LayerWork layer_work(const LayerSpec& l, const ModelSpec& m, const WorkContext& c, double tokens, double seq,
                     bool trains, bool needs_grad) {
    LayerWork out;
    add_projections(out, l, c, tokens, trains, needs_grad);
    add_fp8_block_casts(out, l, c, tokens, trains, needs_grad);
    const double attention_forward_flops = l.has_attention() ? add_attention_core(out, l, c, tokens, seq, needs_grad) : 0;
    add_ssm_core(out, l, c, tokens, seq, needs_grad);
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
