#include "memory/step_walk.hpp"

#include <algorithm>

namespace ftb {
namespace {

// PyTorch's cuBLAS workspace per handle: ":4096:8" (32 MiB) on Hopper and newer, ":4096:2:16:8" (~8 MiB)
// before (aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize). It comes from the caching
// allocator, so it counts as allocated.
double cublas_workspace_bytes(const DeviceSpec& d) {
    if (d.kind != DeviceKind::gpu || d.vendor != "nvidia") return 0;
    const bool hopper_or_newer = d.peak_tflops.fp8 > 0;
    return hopper_or_newer ? 32.0 * 1048576 : 4096.0 * 1024 * 2 + 16.0 * 1024 * 8;
}

// `side`: the part of `b` that lives in a collective stream's pool (FSDP2's sharded gradients); `holes`: what the
// compute stream has mapped beyond its live blocks at this point.
void take_max(PhasePeak& best, const MemoryBreakdown& b, MemoryPhase phase, double side = 0, double holes = 0) {
    const double t = b.allocated();
    if (t > best.total) {
        best.total = t;
        best.parts = b;
        best.phase = phase;
    }
    best.compute_stream_peak = std::max(best.compute_stream_peak, t - side + holes);
}

// The sharded gradients that exist at a point of backward (FSDP2 makes them on its reduce-scatter stream).
double side_stream_grads(const StageMemory& s, double formed) { return s.grads.on_side_stream ? formed : 0; }

// Forward block by block, for reports: the other in-flight micro-batches' activations, this micro-batch's
// saved tensors and autocast copies up to the block. `end` is the end of forward (the last block's point).
void forward_ramp(const StageMemory& s, const MemoryBreakdown& end, std::vector<MemoryWalkPoint>& points) {
    const std::vector<double>& per_block = s.activations.per_block;
    const size_t n = per_block.size();
    const double in_flight = s.activations.in_flight;
    const double all_micro_batches = s.activations.offloaded ? s.activations.host : s.activations.resident;
    const double per_block_copies = n > 0 ? s.weights.amp_copies / double(n) : 0;
    double saved = all_micro_batches / in_flight * (in_flight - 1);
    for (size_t k = 0; k + 1 < n; ++k) {
        saved += per_block[k];
        MemoryBreakdown b = end;
        b.weights_bytes = s.weights.stored + s.weights.gathered + per_block_copies * double(k + 1) + s.weights.dequant;
        b.activations_bytes = std::min(saved, s.activations.resident);
        points.push_back({MemoryPhase::forward, int(s.first_block + int64_t(k)), b});
    }
    points.push_back({MemoryPhase::forward, int(s.first_block + int64_t(n) - 1), end});
}

// The output head's weight gradient while the head's backward runs: the new gradient, plus the input buffer that
// sums the chunks already done when the head runs chunk by chunk (a chunked loss uses the weight once per chunk).
double head_grad_in_flight(const Job& job, const StageMemory& s) {
    return s.grads.head * (job.spec.train.loss == LossImpl::chunked ? 2 : 1);
}

// The head's gather, before its logits form (`end` holds the gathered head, no logits): with ZeRO-3 offload the
// head's weight is there once gathered and once staged.
MemoryBreakdown head_gather_point(const StageMemory& s, const MemoryBreakdown& end) {
    MemoryBreakdown b = end;
    b.weights_bytes += s.weights.head_staging;
    b.temporary_bytes = s.work.cublas;
    return b;
}

// End of forward and the loss: every block's saved tensors, all compute copies, the logits at their peak.
void walk_forward(const Job& job, const StageMemory& s, PhasePeak& best, std::vector<MemoryWalkPoint>* points) {
    const bool zero0 = job.spec.parallel.zero == 0;
    MemoryBreakdown b;
    b.weights_bytes = s.weights.stored + s.weights.gathered + s.weights.amp_copies + s.weights.dequant +
                      (s.weights.dequant_saved_in_forward ? s.weights.dequant_saved : 0) +
                      (s.has_head ? s.weights.head_gathered : 0);
    const double persisting = s.grads.persist ? s.grads.resident : 0;
    b.gradients_bytes = persisting + s.grads.accumulated + (zero0 || s.grads.buffers_kept ? s.grads.buffers : 0);
    b.optimizer_bytes = s.optimizer.resident;
    b.activations_bytes = s.activations.resident;
    b.logits_bytes = s.loss.peak;
    b.temporary_bytes = s.work.cublas + (s.has_head ? 0 : s.work.forward);
    const double side = side_stream_grads(s, persisting);
    take_max(best, b, s.has_head ? MemoryPhase::loss : MemoryPhase::forward, side,
             s.has_head ? s.loss.reserved - s.loss.peak : 0);
    const MemoryBreakdown at_loss = b;
    // The head's backward, after the cross-entropy's: the logits' gradient (and any held logits) beside the head's
    // weight gradient in flight.
    MemoryBreakdown at_head = b;
    at_head.logits_bytes = s.loss.held + s.loss.grad;
    at_head.gradients_bytes += head_grad_in_flight(job, s) + s.grads.root_unsharded;
    at_head.weights_bytes += s.weights.root_gathered - (s.weights.root_gathered > 0 ? s.weights.head_gathered : 0);
    if (s.has_head) take_max(best, at_head, MemoryPhase::loss, side);
    b.logits_bytes = 0;
    const bool staged = s.has_head && s.weights.head_staging > 0;
    const MemoryBreakdown at_gather = head_gather_point(s, b);
    if (staged) take_max(best, at_gather, MemoryPhase::loss, side);
    b.weights_bytes -= s.has_head ? s.weights.head_gathered : 0;
    b.temporary_bytes = s.work.cublas + s.work.forward;
    take_max(best, b, MemoryPhase::forward, side);
    if (points) {
        forward_ramp(s, b, *points);
        if (staged) points->push_back({MemoryPhase::loss, -1, at_gather});
        if (s.has_head) {
            points->push_back({MemoryPhase::loss, -1, at_loss});
            points->push_back({MemoryPhase::loss, -1, at_head});
        }
    }
}

// Backward, block by block from the top: saved tensors of the blocks below stay, gradients of the blocks
// above have been formed, and one block's working set (recomputed activations + gradient temporaries).
void walk_backward(const Job& job, const StageMemory& s, PhasePeak& best, std::vector<MemoryWalkPoint>* points) {
    const std::vector<double>& per_block = s.activations.per_block;
    const size_t n = per_block.size();
    // The head's gradient exists from the start of backward: until the optimizer step, or (optimizer in backward)
    // until the embedding's backward when the two are tied; the blocks' gradients form one block at a time.
    const bool in_backward = job.spec.train.optimizer_in_backward;
    const double head_kept = (s.grads.head_held || !in_backward) ? s.grads.head : 0;
    const double body_grads = s.grads.resident - (in_backward ? 0 : s.grads.head);
    const double per_block_grads = n > 0 ? body_grads / double(n) : 0;
    const double per_block_copies = n > 0 ? s.weights.amp_copies / double(n) : 0;
    double remaining = s.activations.resident;
    // FSDP2's root unit and its head gradient stay unsharded until the root's post-backward, after every block.
    const double root_weights = s.weights.root_gathered, root_grads = s.grads.root_unsharded;
    for (size_t k = 0; k < n; ++k) {
        MemoryBreakdown b;
        b.weights_bytes = s.weights.stored + s.weights.gathered + s.weights.amp_copies - per_block_copies * double(k) +
                          s.weights.dequant + s.weights.dequant_saved + root_weights;
        const double formed = s.grads.persist ? s.grads.resident : head_kept + per_block_grads * double(k + 1);
        b.gradients_bytes = formed + s.grads.buffers + s.grads.accumulated + root_grads;
        b.optimizer_bytes = s.optimizer.resident;
        b.activations_bytes = remaining + s.activations.recompute_work;
        b.logits_bytes = s.loss.held;
        b.temporary_bytes = s.work.cublas + s.work.backward;
        take_max(best, b, MemoryPhase::backward, side_stream_grads(s, formed));
        if (points) points->push_back({MemoryPhase::backward, int(s.first_block + int64_t(n - 1 - k)), b});
        // The block's saved tensors of this micro-batch are freed; other in-flight micro-batches keep theirs.
        if (!s.activations.offloaded) remaining = std::max(0.0, remaining - per_block[n - 1 - k]);
    }
    if (!s.grads.head_held) return;
    // The embedding's backward of a tied head: its dense gradient (embedding_dense_backward) forms beside the
    // head's gradient in the input buffer before the two are summed.
    MemoryBreakdown b;
    b.weights_bytes = s.weights.stored + s.weights.gathered + s.weights.dequant;
    const double formed = s.grads.persist ? s.grads.resident : head_kept + per_block_grads * double(n);
    b.gradients_bytes = formed + s.grads.buffers + s.grads.head + s.grads.accumulated;
    b.optimizer_bytes = s.optimizer.resident;
    b.logits_bytes = s.loss.held;
    b.temporary_bytes = s.work.cublas;
    take_max(best, b, MemoryPhase::backward, side_stream_grads(s, formed));
    if (points) points->push_back({MemoryPhase::backward, int(s.first_block), b});
}

// Optimizer step: weights, all gradients, states, and the step's intermediates. ZeRO-3 steps on shards:
// no gathered blocks; no autocast copies.
void walk_optimizer_step(const Job& job, const StageMemory& s, PhasePeak& best, std::vector<MemoryWalkPoint>* points) {
    MemoryBreakdown b;
    b.weights_bytes = s.weights.stored;
    b.gradients_bytes = s.grads.resident + (job.spec.parallel.zero == 0 || s.grads.buffers_kept ? s.grads.buffers : 0);
    b.optimizer_bytes = s.optimizer.resident;
    b.temporary_bytes = s.optimizer.step_temp + s.work.cublas;
    take_max(best, b, MemoryPhase::optimizer_step, side_stream_grads(s, s.grads.resident));
    if (points) points->push_back({MemoryPhase::optimizer_step, -1, b});
}

}  // namespace

Workspaces stage_workspaces(const Job& job, const TrainingSetup& set, const StageSplit& sp) {
    const ModelSpec& m = job.model;
    const TrainSpec& tr = job.spec.train;
    const double tp = double(job.spec.parallel.tp);
    const double sp_div = job.spec.parallel.sequence_parallel ? tp : 1.0;
    const double tokens = double(set.tokens_per_micro_batch);
    const double seq = double(set.seq_len);
    const LayerSpec& l0 = m.layers[size_t(sp.first)];
    double i_width = double(l0.ffn_intermediate) * (l0.experts > 0 ? double(l0.experts_per_token) : 1.0);
    if (m.has_ssm()) {   // hybrid stacks differ block to block: the widest FFN product or in_proj output of the stage
        for (int64_t li = sp.first; li < sp.last; ++li) {
            const LayerSpec& l = m.layers[size_t(li)];
            i_width = std::max({i_width, double(l.ssm_in_width()),
                                double(l.ffn_intermediate) * (l.experts > 0 ? double(l.experts_per_token) : 1.0)});
        }
    }
    Workspaces w;
    w.forward = set.bytes.act * i_width / tp * tokens;   // the FFN product feeding down_proj
    if (tr.attention == Attention::eager)
        w.forward = std::max(w.forward, (set.bytes.act + 4) * double(l0.heads) / tp * seq * tokens);
    w.backward = 3 * set.bytes.act * i_width / tp * tokens + 2 * set.bytes.residual * double(m.hidden) * tokens / sp_div;
    if (tr.attention == Attention::eager) w.backward = std::max(w.backward, 2 * 4 * double(l0.heads) / tp * seq * tokens);
    w.cublas = cublas_workspace_bytes(job.system.device);
    return w;
}

PhasePeak walk_step(const Job& job, const StageMemory& s, std::vector<MemoryWalkPoint>* points) {
    PhasePeak best;
    walk_forward(job, s, best, points);
    walk_backward(job, s, best, points);
    walk_optimizer_step(job, s, best, points);
    best.side_stream_pools = s.weights.all_gather_pool + s.grads.reduce_scatter_pool;
    return best;
}

}  // namespace ftb
