#include "memory/loss_memory.hpp"

#include <algorithm>

namespace ftb {
namespace {

// Bytes per token of the logits and loss at their peak (the start of the loss backward), and what stays
// held afterwards (the logits the training loop keeps until backward finishes).
struct LossBytes {
    double peak_per_token = 0;
    double held_per_token = 0;
    double workspace = 0;          // independent of tokens (chunked / fused)
};

// torchtune's CEWithChunkedOutputLoss: the head writes `chunks` low-precision chunks, all of them kept for their
// cross-entropy's backward; each chunk is upcast to fp32 inside its own cross-entropy ("only upcasting one chunk at
// a time", torchtune/modules/loss/ce_chunked_output_loss.py). Compiled (the recipes compile compute_cross_entropy,
// training.compile_loss), Inductor fuses the upcast into the reduction and into backward's kernel, so no fp32
// chunk is materialised: the chunks' low-precision logits and the gradient of the chunk in backward are live. Eager, each chunk's log_softmax keeps its fp32 output for
// backward (autograd's _log_softmax_backward_data takes the output), so all chunks' fp32 log-probabilities are
// live, and backward adds the chunk's incoming and produced fp32 gradients.
LossBytes output_chunked_loss(const Job& job, double V, double logit) {
    const double chunks = double(job.framework.chunked_loss_output_chunks);
    LossBytes lb;
    if (job.spec.train.compile) lb.peak_per_token = V * (logit + logit / chunks);
    else lb.peak_per_token = V * (logit + 4 + 2 * 4 / chunks);
    lb.held_per_token = V * logit;
    return lb;
}

// The model hands the loss fp32 logits (torchtune's `self.output(h).float()`): eager, log_softmax keeps its fp32
// output, and backward holds it with its incoming and produced fp32 gradients (the profile's live copies; the fp32
// logits themselves go with `del logits`). Compiled (the recipes compile the whole loss when it is not chunked,
// torchtune/training/_compile.py compile_loss), Inductor's cross-entropy keeps its fp32 input and the per-row
// log-sum-exp, and its backward writes one fp32 gradient that `.float()`'s backward casts to the head's dtype.
LossBytes upcast_output_loss(const Job& job, double V, double head_bytes) {
    LossBytes lb;
    constexpr double fp32 = 4;
    if (job.spec.train.compile) lb.peak_per_token = V * (2 * fp32 + head_bytes);
    else lb.peak_per_token = V * std::max(2 * fp32, job.framework.cross_entropy_live_copies * fp32);
    lb.held_per_token = V * fp32;
    return lb;
}

LossBytes loss_bytes(const Job& job, const TrainingSetup& s, double vocab_shard, double hidden) {
    const double V = vocab_shard;
    const double logit = s.bytes.act;                      // lm_head output dtype
    LossBytes lb;
    switch (job.spec.train.loss) {
        case LossImpl::standard:
        case LossImpl::fp32_upcast: {
            if (job.framework.output_upcast_fp32 && job.framework.logits_freed_after_loss) {
                lb = upcast_output_loss(job, V, logit);
                break;
            }
            // Cross-entropy in fp32 when asked, and under autocast (log_softmax is on its fp32 list).
            const double ce = (job.spec.train.loss == LossImpl::fp32_upcast || s.bytes.autocast) ? 4 : logit;
            // Held logits + the cross-entropy's live vocabulary-sized tensors (framework profile).
            lb.peak_per_token = V * (logit + job.framework.cross_entropy_live_copies * ce);
            // Logits dropped after the loss: log_softmax keeps its output, not its input, so the logits go before
            // backward starts; the peak is the larger of the forward (logits + log-probabilities) and backward.
            if (job.framework.logits_freed_after_loss)
                lb.peak_per_token = V * std::max(logit + ce, job.framework.cross_entropy_live_copies * ce);
            lb.held_per_token = V * logit;
            break;
        }
        case LossImpl::chunked: {
            if (job.framework.chunked_loss_output_chunks > 0) {
                lb = output_chunked_loss(job, V, logit);
                break;
            }
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

}  // namespace

LossMemory loss_memory(const Job& job, const TrainingSetup& set, const StageSplit& sp) {
    LossMemory out;
    if (!sp.has_head) return out;
    const double tokens = double(set.tokens_per_micro_batch);
    const LossBytes lb = loss_bytes(job, set, double(job.model.vocab) / double(job.spec.parallel.tp), double(job.model.hidden));
    out.peak = lb.peak_per_token * tokens + lb.workspace;
    out.held = job.framework.logits_freed_after_loss ? 0.0 : lb.held_per_token * tokens;
    // The gradient reaching the head is the logits' size in their dtype; a fused loss never forms it.
    if (job.spec.train.loss != LossImpl::fused)
        out.grad = double(job.model.vocab) / double(job.spec.parallel.tp) * set.bytes.act * tokens;
    return out;
}

}  // namespace ftb
