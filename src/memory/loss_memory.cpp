#include "memory/loss_memory.hpp"

#include <algorithm>
#include <vector>

#include "memory/device_segment.hpp"

namespace ftb {
namespace {

// The loop lets the logits go once the loss is formed, unless a pipeline schedule keeps every micro-batch's output on
// the last stage (FrameworkProfile::pp_last_stage_keeps_outputs).
bool logits_freed(const Job& job) {
    const FrameworkProfile& fw = job.framework;
    return fw.logits_freed_after_loss && !(job.spec.parallel.pp > 1 && fw.pp_last_stage_keeps_outputs);
}

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

// The loss function compiled with its upcast inside (torchtitan: `cross_entropy(pred.flatten(0, 1).float(), ...)`
// under torch.compile): Inductor fuses the cast into the log-softmax reduction and its backward into one kernel, and
// the partitioner saves the cheapest tensor backward can rebuild from, the low-precision logits themselves (the
// per-row statistics are noise); backward writes the logits' gradient in their dtype (the cast's backward is in
// the graph). So the logits and their gradient are the loss's vocabulary-sized tensors.
LossBytes compiled_loss(double V, double logit) {
    LossBytes lb;
    lb.peak_per_token = V * 2 * logit;
    return lb;
}

// Loss parallel (torch/distributed/tensor/parallel/loss.py, the DTensor handlers torchtitan's loss runs under
// with tensor parallelism), eager, on the fp32 copy of this rank's vocabulary shard: _log_softmax makes
// `shifted = x - x_max`, `exp(shifted)` (summed, then freed) and `result = shifted - logsumexp`, the output
// log_softmax keeps; _nll_loss_and_log_softmax_backward makes `grad_input = zeros_like(x)`, then
// `(grad_input + torch.exp(x)) * grad_output`: the exponential, the sum and the product beside the saved
// output. Forward: logits + copy + shifted + exp = 14 bytes; backward: output, zeros, sum and product = 16.
LossBytes loss_parallel_loss(double V, double logit, bool freed) {
    LossBytes lb;
    lb.peak_per_token = V * std::max(logit + 3 * 4, 4 * 4 + (freed ? 0 : logit));
    lb.held_per_token = freed ? 0 : V * logit;
    return lb;
}

// Its tensors in order through one stream's segment (V: the logits' elements): what the segment maps beyond
// their largest live sum (the holes).
double loss_parallel_holes(double V, double logit, bool freed) {
    DeviceSegment seg;
    const int logits = seg.allocate(V * logit);
    const int copy = seg.allocate(V * 4);
    const int shifted = seg.allocate(V * 4);
    seg.release(seg.allocate(V * 4));   // exp(shifted), summed
    const int out = seg.allocate(V * 4);
    seg.release(shifted);
    seg.release(copy);
    if (freed) seg.release(logits);
    const int zeros = seg.allocate(V * 4);
    const int exp = seg.allocate(V * 4);
    const int sum = seg.allocate(V * 4);
    seg.release(exp);
    const int grad = seg.allocate(V * 4);
    seg.release(sum);
    seg.release(zeros);
    seg.release(out);
    seg.allocate(V * logit);   // the cast back to the logits' dtype
    seg.release(grad);
    return seg.mapped_bytes() - seg.peak_live_bytes();
}

bool runs_loss_parallel(const Job& job) {
    const TrainSpec& t = job.spec.train;
    return job.spec.parallel.tp > 1 && job.framework.tp_loss_parallel && !(t.compile && job.framework.compile_loss) &&
           (t.loss == LossImpl::standard || t.loss == LossImpl::fp32_upcast);
}

LossBytes loss_bytes(const Job& job, const TrainingSetup& s, double vocab_shard, double hidden) {
    const double V = vocab_shard;
    const double logit = s.bytes.act;                      // lm_head output dtype
    LossBytes lb;
    if (runs_loss_parallel(job)) return loss_parallel_loss(V, logit, logits_freed(job));
    switch (job.spec.train.loss) {
        case LossImpl::standard:
        case LossImpl::fp32_upcast: {
            if (job.framework.output_upcast_fp32 && logits_freed(job)) {
                lb = upcast_output_loss(job, V, logit);
                break;
            }
            if (job.spec.train.compile && job.framework.compile_loss) {
                lb = compiled_loss(V, logit);
                break;
            }
            // Cross-entropy in fp32 when asked, and under autocast (log_softmax is on its fp32 list).
            const double ce = (job.spec.train.loss == LossImpl::fp32_upcast || s.bytes.autocast) ? 4 : logit;
            // Held logits + the cross-entropy's live vocabulary-sized tensors (framework profile).
            lb.peak_per_token = V * (logit + job.framework.cross_entropy_live_copies * ce);
            // Logits dropped after the loss: log_softmax keeps its output, not its input, so the logits go before
            // backward starts; the peak is the larger of the forward (logits + log-probabilities) and backward.
            if (logits_freed(job))
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

// The loss's vocabulary-sized tensors in the order they are made and freed, replayed through one stream's segment
// (V: the logits' elements): the logits, the shifted copy where the model makes one, the cross-entropy's upcast copy when it computes in a wider
// dtype (freed once log_softmax has run: LogSoftmaxBackward keeps its output, ToCopyBackward nothing), the
// log-softmax output, the logits released when the loop drops them, then backward's gradients (nll_loss's, then
// log_softmax's, each new; the saved output and the first gradient go once log_softmax's backward has run) and the
// cast back to the logits' dtype. Returns what the segment maps beyond their largest live sum (the holes).
double eager_loss_holes(double V, double logit, double ce, double live_copies, bool freed, bool shift_copy) {
    DeviceSegment seg;
    const int logits = seg.allocate(V * logit);
    const int shifted = shift_copy ? seg.allocate(V * logit) : -1;
    const int upcast = ce != logit ? seg.allocate(V * ce) : -1;
    const int out = seg.allocate(V * ce);
    if (upcast >= 0) seg.release(upcast);
    if (shifted >= 0) seg.release(shifted);
    if (freed) seg.release(logits);
    std::vector<int> grads;
    for (int k = 1; k < int(live_copies); ++k) grads.push_back(seg.allocate(V * ce));
    seg.release(out);
    if (grads.size() > 1) seg.release(grads.front());
    if (ce != logit) seg.allocate(V * logit);
    return seg.mapped_bytes() - seg.peak_live_bytes();
}

// torchtune's fp32 model output (the head's low-precision output, cast by the model and freed), then the eager
// cross-entropy on it, the loop dropping the fp32 logits after the loss, and backward's casts back.
double upcast_output_holes(double V, double head_bytes, double live_copies) {
    DeviceSegment seg;
    const int head_out = seg.allocate(V * head_bytes);
    const int logits = seg.allocate(V * 4);
    seg.release(head_out);
    const int out = seg.allocate(V * 4);
    seg.release(logits);
    std::vector<int> grads;
    for (int k = 1; k < int(live_copies); ++k) grads.push_back(seg.allocate(V * 4));
    seg.release(out);
    if (grads.size() > 1) seg.release(grads.front());
    seg.allocate(V * head_bytes);
    return seg.mapped_bytes() - seg.peak_live_bytes();
}

// The loss tensors' reservation: their peak plus the holes their order leaves where it is known (eager standard /
// fp32 upcast / loss parallel). `tokens` rows of `V` logits each.
double loss_reservation(const Job& job, const TrainingSetup& s, double V, double tokens, const LossBytes& lb) {
    const TrainSpec& t = job.spec.train;
    const FrameworkProfile& fw = job.framework;
    const double peak = lb.peak_per_token * tokens, n = V * tokens;
    if (t.loss != LossImpl::standard && t.loss != LossImpl::fp32_upcast) return peak;
    const double logit = s.bytes.act;
    if (runs_loss_parallel(job)) return peak + loss_parallel_holes(n, logit, logits_freed(job));
    if (fw.output_upcast_fp32 && logits_freed(job))
        return t.compile ? peak : peak + upcast_output_holes(n, logit, fw.cross_entropy_live_copies);
    if (t.compile && fw.compile_loss) return peak;
    const double ce = (t.loss == LossImpl::fp32_upcast || s.bytes.autocast) ? 4 : logit;
    return peak + eager_loss_holes(n, logit, ce, fw.cross_entropy_live_copies, logits_freed(job), fw.loss_shift_copy);
}

}  // namespace

LossMemory loss_memory(const Job& job, const TrainingSetup& set, const StageSplit& sp) {
    LossMemory out;
    if (!sp.has_head) return out;
    const double tokens = double(set.tokens_per_micro_batch);
    const LossBytes lb = loss_bytes(job, set, double(job.model.vocab) / double(job.spec.parallel.tp), double(job.model.hidden));
    out.peak = lb.peak_per_token * tokens + lb.workspace;
    out.reserved = loss_reservation(job, set, double(job.model.vocab) / double(job.spec.parallel.tp), tokens, lb) + lb.workspace;
    out.held = logits_freed(job) ? 0.0 : lb.held_per_token * tokens;
    if (job.spec.parallel.pp > 1 && job.framework.pp_last_stage_keeps_outputs) {
        // The earlier micro-batches' logits, kept in the stage's output_chunks until the step ends.
        const double earlier = double(std::max<int64_t>(set.grad_accumulation - 1, 0)) * lb.held_per_token * tokens;
        out.peak += earlier;
        out.reserved += earlier;
        out.held += earlier;
    }
    // The gradient reaching the head is the logits' size in their dtype; a fused loss never forms it.
    if (job.spec.train.loss != LossImpl::fused)
        out.grad = double(job.model.vocab) / double(job.spec.parallel.tp) * set.bytes.act * tokens;
    return out;
}

}  // namespace ftb
