// The memory walk: per pipeline stage, what is live at the end of forward, through the loss,
// through backward layer by layer, and in the optimizer step; the peak is the largest.
#include <algorithm>
#include <cmath>

#include "ftbound/memory.hpp"
#include "memory/activations.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

const char* to_string(MemoryPhase p) {
    switch (p) {
        case MemoryPhase::forward: return "forward";
        case MemoryPhase::loss: return "loss";
        case MemoryPhase::backward: return "backward";
        case MemoryPhase::optimizer_step: return "optimizer step";
    }
    return "?";
}

namespace {

// PyTorch's cuBLAS workspace per handle: ":4096:8" (32 MiB) on Hopper and newer, ":4096:2:16:8" (~8 MiB)
// before (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize). It comes from the caching
// allocator, so it counts as allocated.
double cublas_workspace_bytes(const DeviceSpec& d) {
    if (d.kind != DeviceKind::gpu || d.vendor != "nvidia") return 0;
    const bool hopper_or_newer = d.peak_tflops.fp8 > 0;
    return hopper_or_newer ? 32.0 * 1048576 : 4096.0 * 1024 * 2 + 16.0 * 1024 * 8;
}

struct StageParams {
    double trainable = 0;          // trainable parameters stored on this GPU (after TP/EP/PP, before ZeRO)
    double frozen = 0;             // frozen, kept in the compute dtype
    double quantised = 0;          // frozen base linears stored quantised (QLoRA)
    double linear_weights = 0;     // parameters read by matmuls (for autocast copies)
    double largest_layer = 0;      // largest block's parameters on this GPU (ZeRO-3 gather unit)
    double largest_quantised = 0;  // largest quantised weight matrix (QLoRA dequantisation buffer)
    double adafactor_state = 0;    // factored second-moment elements
    double blocks = 0;             // all block parameters on this GPU (FSDP units)
};

struct Split {
    int64_t first = 0, last = 0;   // block index range [first, last)
    bool has_embedding = false, has_head = false;
};

Split stage_split(int64_t layers, int64_t pp, int64_t stage) {
    // Megatron's even split; the first stages take the remainder.
    const int64_t base = layers / pp, extra = layers % pp;
    Split s;
    s.first = stage * base + std::min(stage, extra);
    s.last = s.first + base + (stage < extra ? 1 : 0);
    s.has_embedding = stage == 0;
    s.has_head = stage == pp - 1;
    return s;
}

StageParams stage_params(const Job& job, const TrainingSetup& set, const Split& sp, bool unsharded = false) {
    const ModelSpec& m = job.model;
    const ParallelSpec& par = job.spec.parallel;
    const double tp = unsharded ? 1.0 : double(par.tp), ep = unsharded ? 1.0 : double(par.ep);
    const bool qlora = job.spec.train.method == Method::qlora;
    const int64_t r = job.spec.train.lora.rank;
    StageParams p;
    double block_params = 0;
    for (int64_t li = sp.first; li < sp.last; ++li) {
        const LayerSpec& l = m.layers[size_t(li)];
        const double attn = double(l.attention_params()) / tp;
        double ffn = double(l.ffn_params());
        if (l.experts > 0) {
            const double router = double(l.hidden * l.experts);
            ffn = (ffn - router) / ep + router;
        }
        ffn /= tp;
        const double norms = double(l.norm_params() + l.relative_attention_params);
        const double layer = attn + ffn + norms;
        block_params += layer;
        p.largest_layer = std::max(p.largest_layer, layer);
        const bool trains = set.full && li >= set.first_trainable_layer;
        if (qlora && !trains)
            p.largest_quantised = std::max({p.largest_quantised, double(l.hidden) * double(l.ffn_intermediate) / tp,
                                            double(l.hidden) * double(l.q_dim()) / tp});
        if (trains) {
            p.trainable += layer;
            p.linear_weights += attn + ffn;
        } else if (qlora) {
            p.quantised += attn + ffn;
            p.frozen += norms;
        } else {
            p.frozen += layer;
        }
        if (set.adapters) p.trainable += double(lora_params_in_layer(l, set.lora_mask, r)) / tp;
        if (job.spec.train.optimizer == Optimizer::adafactor && trains) {
            // Factored second moment: rows + cols per matrix (Shazeer & Stern 2018); vectors keep full state.
            const double h = double(l.hidden), i = double(l.ffn_intermediate);
            const int mats_ffn = l.ffn_kind == FfnKind::gated ? 3 : 2;
            p.adafactor_state += (4 * (h + double(l.q_dim())) + mats_ffn * (h + i)) / tp + norms;
        }
    }
    const double vocab_shard = double(m.vocab) * double(m.hidden) / tp;
    const bool head_trains = set.full;   // freeze trains the head with the last blocks; LoRA keeps it frozen
    auto add_matrix = [&](double n, bool trains) {
        if (trains) {
            p.trainable += n;
            p.linear_weights += n;
        } else {
            p.frozen += n;
        }
    };
    if (sp.has_embedding) {
        const double emb = vocab_shard + double(m.position_embedding_params) + double(m.embedding_norm_params) +
                           double(m.extra_params) + double(m.vision_params);
        if (set.full && set.first_trainable_layer == 0) p.trainable += emb;
        else p.frozen += emb;
    }
    if (sp.has_head) {
        const double final_norms = double(m.final_norms) * double(m.final_norm_params);
        if (head_trains) p.trainable += final_norms;
        else p.frozen += final_norms;
        // A tied head shares the embedding matrix; across pipeline stages the last stage keeps its own copy.
        const bool head_quantised = qlora && job.framework.qlora_quantizes_lm_head && !m.tie_word_embeddings;
        if (head_quantised) {
            p.quantised += vocab_shard;
            p.largest_quantised = std::max(p.largest_quantised, vocab_shard);
        }
        else if (!m.tie_word_embeddings) add_matrix(vocab_shard + (m.lm_head_bias ? double(m.vocab) / tp : 0), head_trains);
        else if (!sp.has_embedding) add_matrix(vocab_shard, head_trains);
        else if (head_trains) p.linear_weights += vocab_shard;   // the tied matrix is also read by the head matmul
        if (set.lora_on_head) p.trainable += double(r) * double(m.hidden + m.vocab) / tp;
        if (job.spec.train.optimizer == Optimizer::adafactor && head_trains)
            p.adafactor_state += double(m.vocab) / tp + double(m.hidden);
    }
    p.blocks = block_params;
    return p;
}

// Bytes per token of the logits and loss at their peak (the start of the loss backward), and what stays
// held afterwards (the logits the training loop keeps until backward finishes).
struct LossBytes {
    double peak_per_token = 0;
    double held_per_token = 0;
    double workspace = 0;          // independent of tokens (chunked / fused)
};

LossBytes loss_bytes(const Job& job, const TrainingSetup& s, double vocab_shard, double hidden) {
    const double V = vocab_shard;
    const double logit = s.bytes.act;                      // lm_head output dtype
    LossBytes lb;
    switch (job.spec.train.loss) {
        case LossImpl::standard:
        case LossImpl::fp32_upcast: {
            // Cross-entropy in fp32 when asked, and under autocast (log_softmax is on its fp32 list).
            const double ce = (job.spec.train.loss == LossImpl::fp32_upcast || s.bytes.autocast) ? 4 : logit;
            // Held logits + the cross-entropy's live vocabulary-sized tensors (framework profile).
            lb.peak_per_token = V * (logit + job.framework.cross_entropy_live_copies * ce);
            lb.held_per_token = V * logit;
            break;
        }
        case LossImpl::chunked: {
            // LitGPT-style: lm_head output in chunks of 128 tokens, each chunk's log-softmax saved for backward;
            // gradients are formed one chunk at a time.
            constexpr double chunk_tokens = 128;
            lb.peak_per_token = V * (logit + logit);
            lb.held_per_token = V * logit;
            lb.workspace = 3 * chunk_tokens * V * 4;
            break;
        }
        case LossImpl::fused:
            // Fused linear + cross-entropy (Liger FusedLinearCrossEntropy): logits exist one chunk at a time,
            // chunk = next_pow2(tokens / ceil(V/H)) rows of fp32, about hidden*4 bytes per token in all.
            lb.peak_per_token = 2 * 4 * hidden;
            lb.held_per_token = 0;
            break;
    }
    return lb;
}

struct PhasePeak {
    double total = 0;
    MemoryBreakdown parts;
    MemoryPhase phase = MemoryPhase::forward;
};

void take_max(PhasePeak& best, const MemoryBreakdown& b, MemoryPhase phase) {
    const double t = b.allocated();
    if (t > best.total) {
        best.total = t;
        best.parts = b;
        best.phase = phase;
    }
}

}  // namespace

MemoryResult plan_memory(const Job& job) {
    const ModelSpec& m = job.model;
    const JobSpec& js = job.spec;
    const ParallelSpec& par = js.parallel;
    const TrainSpec& tr = js.train;
    const FrameworkProfile& fw = job.framework;
    const TrainingSetup set = derive_setup(job);
    const DeviceSpec& dev = job.system.device;
    MemoryResult res;
    res.capacity_bytes = dev.kind == DeviceKind::gpu ? dev.memory_bytes : job.system.host_memory_bytes / job.system.sockets;
    res.total_params = double(m.total_params());

    const double tp = double(par.tp);
    const double sp_div = par.sequence_parallel ? tp : 1.0;
    const double tokens = double(set.tokens_per_micro_batch);
    res.tokens_per_micro_batch = tokens;
    const int64_t L = int64_t(m.num_layers());
    const int64_t ga = set.grad_accumulation;
    const bool zero3 = par.zero >= 3;
    const double shard = double(set.dp_shard);
    const bool opt_offload = js.offload.optimizer != OffloadTarget::none;
    const bool param_offload = js.offload.params != OffloadTarget::none;
    const bool act_offload = js.offload.activations != OffloadTarget::none;

    // Total trainable parameters (whole model), for the report.
    {
        Split all{0, L, true, true};
        res.trainable_params = stage_params(job, set, all, true).trainable;
    }

    PhasePeak best;
    best.total = -1;
    double host_per_gpu = 0;
    double paged = 0;   // unified-memory optimizer state: device-used, not allocated
    const int64_t stages = par.pp;
    for (int64_t stage = 0; stage < stages; stage = (stage == 0 && stages > 1) ? stages - 1 : stages) {
        const Split sp = stage_split(L, par.pp, stage);
        const StageParams p = stage_params(job, set, sp);

        // ---- weights ----
        double weights = p.trainable * set.trainable_storage_bytes + p.frozen * set.frozen_storage_bytes +
                         p.quantised * set.quant_bytes_per_param;
        double gathered = 0;
        if (zero3) {
            weights /= shard;
            // Prefetch keeps `zero3_live_layers` full blocks gathered in the compute dtype.
            gathered = double(fw.zero3_live_layers) * p.largest_layer * set.bytes.weight_compute;
        }
        if (param_offload) weights = 0;
        const double stored_weights_host = param_offload ? (p.trainable + p.frozen) * set.bytes.weight_compute / shard : 0;
        // torch.amp: each fp32 weight is cast per matmul and the copy is kept for backward (the grad of the input).
        const double amp_copies = set.amp_weight_copies ? p.linear_weights * set.bytes.weight_compute / (zero3 ? shard : 1) : 0;
        const double dequant = p.largest_quantised * set.bytes.weight_compute;

        // ---- gradients ----
        // FSDP units that mix frozen and trainable weights keep gradients for the whole unit.
        const bool fsdp_mixed_units = zero3 && set.adapters && fw.fsdp_unit_mixes_frozen;
        const double grad_params = fsdp_mixed_units ? std::max(p.trainable, p.blocks) : p.trainable;
        double grads_full = grad_params * set.grad_bytes;
        double grads_resident = grads_full;
        double grad_buffers = 0;
        if (par.zero >= 2) grads_resident = grads_full / shard;
        if (opt_offload) grads_resident = 0;   // reduced gradients stream to the host optimizer
        if (par.zero >= 2 || opt_offload) {
            // DeepSpeed reduce bucket / FSDP's unsharded gradient of the block in flight.
            const double bucket = zero3 ? p.largest_layer * set.grad_bytes : fw.zero_bucket_elements * set.grad_bytes;
            grad_buffers = std::min(bucket, grads_full);
        }
        if (par.zero == 0 && par.dp > 1 && fw.ddp_gradient_buckets) grad_buffers = grads_full;   // DDP flat buckets
        if (js.train.optimizer_in_backward) {
            // Gradients are consumed layer by layer: at most one block's worth exists.
            grads_resident = std::min(grads_resident, p.largest_layer * set.grad_bytes);
        }
        const bool grads_persist = ga > 1 && !js.train.optimizer_in_backward;
        // Accumulating under FSDP no_sync(): gradients stay unsharded between micro-batches.
        if (zero3 && ga > 1 && fw.fsdp_no_sync_accumulation) grads_resident = grads_full;

        // ---- optimizer states ----
        double opt = p.trainable * set.optimizer_bytes_per_param + p.adafactor_state * 4;
        if (par.zero >= 1) opt /= shard;
        double opt_host = 0;
        if (opt_offload) {
            // ZeRO-Offload keeps fp32 master weights, states and fp32 gradients in host memory (Ren et al. 2021).
            opt_host = (p.trainable * (set.optimizer_bytes_per_param + (set.master_bytes_per_param > 0 ? 0 : 4) + 4)) /
                       (par.zero >= 1 ? shard : 1);
            opt = 0;
        }
        double paged_opt = 0;
        if (js.train.optimizer == Optimizer::paged_adamw_8bit) {
            // bitsandbytes paged optimizers allocate states in CUDA unified memory, outside PyTorch's allocator:
            // nvidia-smi sees them, torch.cuda.max_memory_allocated does not.
            paged_opt = opt;
            opt = 0;
        }
        double opt_temp = 0;
        if (!opt_offload && fw.optimizer_step == OptimizerStepImpl::foreach &&
            (tr.optimizer == Optimizer::adamw || tr.optimizer == Optimizer::adam || tr.optimizer == Optimizer::lion)) {
            // torch.optim foreach AdamW: _foreach_sqrt(exp_avg_sqs) makes one state-sized intermediate.
            opt_temp = p.trainable * set.state_bytes / (par.zero >= 1 ? shard : 1);
            if (js.train.optimizer_in_backward) opt_temp = p.largest_layer * set.state_bytes;
        }

        // ---- activations ----
        double act_total = 0, act_layer_max = 0, act_layer_work = 0, layer_input = 0;
        const int64_t seq = tr.seq_len;
        std::vector<double> per_layer;   // saved bytes of each block of this stage, for the backward walk
        per_layer.reserve(size_t(sp.last - sp.first));
        for (int64_t li = sp.first; li < sp.last; ++li) {
            const LayerSpec& l = m.layers[size_t(li)];
            const bool trains = set.full && li >= set.first_trainable_layer;
            const bool needs_grad = set.adapters || li >= set.first_trainable_layer;
            const LayerActivation a = layer_activation(l, m, job, set, trains, needs_grad, seq);
            if (li == sp.first && stage == 0) res.layer_activation_per_token = a.per_token;
            const double tp_part = a.tp_sharded_per_token / tp;
            const double rep_part = (a.per_token.total() - a.tp_sharded_per_token) / sp_div;
            double saved = (tp_part + rep_part) * tokens;
            const double working = saved;
            if (tr.recompute == Recompute::selective) saved -= a.scores_per_token / tp * tokens;
            if (tr.recompute == Recompute::full) saved = needs_grad ? a.layer_input_per_token / sp_div * tokens : 0;
            per_layer.push_back(saved);
            act_total += saved;
            act_layer_max = std::max(act_layer_max, saved);
            act_layer_work = std::max(act_layer_work, working);
            layer_input = std::max(layer_input, a.layer_input_per_token / sp_div * tokens);
        }
        // Final norm and the head input on the last stage; embedding-level dropout masks on the first.
        double head_act = 0;
        if (sp.has_head) {
            head_act += norm_saved_per_token(m, job, set, set.full) * tokens / sp_div;
            if (set.full || set.lora_on_head) head_act += set.bytes.matmul_in * double(m.hidden) * tokens / sp_div;
            if (m.encoder_decoder) head_act += set.bytes.act * double(m.hidden) * tokens;   // encoder output for cross-attention
        }
        if (sp.has_embedding && m.hidden_dropout > 0) head_act += double(m.hidden) * tokens;
        act_total += head_act;

        // In-flight micro-batches of the pipeline schedule at this stage (1F1B: pp - stage, at most the
        // micro-batches of a step; GPipe: all of them; interleaved: 1 + (p-1)/(p*v) more (Korthikanti et al. 2022 §4.2.3)).
        double in_flight = 1;
        if (par.pp > 1) {
            if (par.pp_schedule == PipelineSchedule::gpipe) in_flight = double(ga);
            else in_flight = double(std::min<int64_t>(par.pp - stage, ga));
            if (par.pp_schedule == PipelineSchedule::interleaved && par.virtual_stages > 1 && stage == 0)
                in_flight *= 1.0 + double(par.pp - 1) / double(par.pp * par.virtual_stages);
        }
        if (stage == 0) res.in_flight_micro_batches = in_flight;
        double act_resident = act_total * in_flight;
        // With full recompute, backward rebuilds one block at a time.
        const double recompute_work = tr.recompute == Recompute::full ? act_layer_work : 0;
        double act_host = 0;
        if (act_offload) {
            // Offloaded activations live in host memory; two blocks stay on the GPU (double buffering).
            act_host = act_resident;
            act_resident = std::min(act_resident, 2 * std::max(act_layer_max, layer_input));
        }

        // ---- logits and loss (last stage) ----
        double loss_peak = 0, loss_held = 0;
        if (sp.has_head) {
            const double vocab_shard = double(m.vocab) / tp;
            const LossBytes lb = loss_bytes(job, set, vocab_shard, double(m.hidden));
            loss_peak = lb.peak_per_token * tokens + lb.workspace;
            loss_held = lb.held_per_token * tokens;
        }

        // ---- transient workspaces ----
        const LayerSpec& l0 = m.layers[size_t(sp.first)];
        const double i_width = double(l0.ffn_intermediate) * (l0.experts > 0 ? double(l0.experts_per_token) : 1.0);
        double fwd_temp = set.bytes.act * i_width / tp * tokens;   // the FFN product feeding down_proj
        if (tr.attention == Attention::eager)
            fwd_temp = std::max(fwd_temp, (set.bytes.act + 4) * double(l0.heads) / tp * double(seq) * tokens);
        // Backward of one block: gradients of the FFN internals and of the residual stream.
        double bwd_temp = 3 * set.bytes.act * i_width / tp * tokens + 2 * set.bytes.residual * double(m.hidden) * tokens / sp_div;
        if (tr.attention == Attention::eager)
            bwd_temp = std::max(bwd_temp, 2 * 4 * double(l0.heads) / tp * double(seq) * tokens);
        const double cublas = cublas_workspace_bytes(dev);

        // ---- the walk ----
        const double persistent_opt = opt;
        const double grads_before = grads_persist ? grads_resident : 0;
        MemoryBreakdown b;
        // End of forward + loss: every block's saved tensors, all compute copies, the logits at their peak.
        b = {};
        b.weights_bytes = weights + gathered + amp_copies + dequant;
        b.gradients_bytes = grads_before + grad_buffers * (par.zero == 0 ? 1 : 0);
        b.optimizer_bytes = persistent_opt;
        b.activations_bytes = act_resident;
        b.logits_bytes = loss_peak;
        b.temporary_bytes = cublas + (sp.has_head ? 0 : fwd_temp);
        PhasePeak stage_best;
        stage_best.total = -1;
        take_max(stage_best, b, sp.has_head ? MemoryPhase::loss : MemoryPhase::forward);
        b.logits_bytes = 0;
        b.temporary_bytes = cublas + fwd_temp;
        take_max(stage_best, b, MemoryPhase::forward);

        // Backward, block by block from the top: saved tensors of the blocks below stay, gradients of the blocks
        // above have been formed, and one block's working set (recomputed activations + gradient temporaries).
        {
            const double per_block_grads = sp.last > sp.first ? grads_resident / double(sp.last - sp.first) : 0;
            const double per_block_copies = sp.last > sp.first ? amp_copies / double(sp.last - sp.first) : 0;
            double remaining_act = act_resident;
            const size_t n = per_layer.size();
            for (size_t k = 0; k < n; ++k) {
                const double formed_grads = grads_persist ? grads_resident : per_block_grads * double(k + 1);
                MemoryBreakdown bb;
                bb.weights_bytes = weights + gathered + amp_copies - per_block_copies * double(k) + dequant;
                bb.gradients_bytes = formed_grads + grad_buffers;
                bb.optimizer_bytes = persistent_opt;
                bb.activations_bytes = remaining_act + recompute_work;
                bb.logits_bytes = loss_held;
                bb.temporary_bytes = cublas + bwd_temp;
                take_max(stage_best, bb, MemoryPhase::backward);
                // The block's saved tensors of this micro-batch are freed; other in-flight micro-batches keep theirs.
                if (!act_offload) remaining_act = std::max(0.0, remaining_act - per_layer[n - 1 - k]);
            }
        }
        // Optimizer step: weights, all gradients, states, and the step's intermediates.
        b = {};
        b.weights_bytes = weights;   // ZeRO-3 steps on shards: no gathered blocks; no autocast copies
        b.gradients_bytes = grads_resident + (par.zero == 0 ? grad_buffers : 0);
        b.optimizer_bytes = persistent_opt;
        b.temporary_bytes = opt_temp + cublas;
        take_max(stage_best, b, MemoryPhase::optimizer_step);

        if (stage_best.total > best.total) {
            best = stage_best;
            res.peak_stage = int(stage);
        }
        host_per_gpu = std::max(host_per_gpu, opt_host + stored_weights_host + act_host);
        if (stage == 0) res.params_per_gpu = (p.trainable + p.frozen + p.quantised) / (zero3 ? shard : 1);
        paged = std::max(paged, paged_opt);
    }

    res.breakdown = best.parts;
    res.peak_phase = best.phase;
    res.allocated_peak_bytes = best.total;
    // Caching allocator: segments cached above the live peak (fragmentation, 2 MiB rounding of large blocks).
    res.allocator_overhead_bytes = res.allocated_peak_bytes * fw.allocator_overhead_fraction;
    res.reserved_peak_bytes = std::ceil((res.allocated_peak_bytes + res.allocator_overhead_bytes) / (2.0 * 1048576)) * 2.0 * 1048576;
    // Communicators: one per parallel dimension in use (data, tensor, pipeline, context, expert).
    int communicators = (par.dp > 1) + (par.tp > 1) + (par.pp > 1) + (par.cp > 1) + (par.ep > 1);
    res.comm_buffer_bytes = communicators * fw.nccl_buffer_bytes;
    res.cuda_context_bytes = dev.kind == DeviceKind::gpu ? dev.cuda_context_bytes : 0;
    res.device_used_bytes = res.reserved_peak_bytes + res.cuda_context_bytes + res.comm_buffer_bytes + paged;
    res.breakdown.overhead_bytes = res.device_used_bytes - res.allocated_peak_bytes;
    res.fits = res.device_used_bytes <= res.capacity_bytes;
    if (job.system.cpu_only) res.fits = res.allocated_peak_bytes * job.system.sockets <= job.system.host_memory_bytes;

    res.host_bytes = host_per_gpu * double(std::min<int64_t>(job.system.devices_per_node, job.system.total_devices()));
    res.host_capacity_bytes = job.system.host_memory_bytes;
    res.host_fits = res.host_capacity_bytes <= 0 || res.host_bytes <= res.host_capacity_bytes;
    return res;
}

}  // namespace ftb
