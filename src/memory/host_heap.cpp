#include "memory/host_heap.hpp"

#include <algorithm>

namespace ftb {

double heap_transient_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    const ModelSpec& m = job.model;
    const double tokens = double(set.tokens_per_micro_batch);
    double bytes = s.activations.resident;
    // Eager attention keeps score-sized tensors of micro_batch x heads x seq x seq elements.
    const double heads = double(m.layers.at(size_t(s.first_block)).heads) / double(job.spec.parallel.tp);
    const double one_score = set.bytes.act * heads * double(job.spec.train.seq_len) * tokens;
    if (one_score >= kGlibcMmapThresholdMaxBytes) bytes -= s.activations.scores_resident;
    const double one_logits = 4.0 * double(m.vocab) * tokens;   // the loss's fp32 logits
    if (s.has_head && one_logits < kGlibcMmapThresholdMaxBytes) bytes += s.loss.peak;
    double grads = s.grads.full;
    if (s.params.trainable > 0 && set.full) {
        // The embedding and head gradients are one vocab x hidden tensor each (one when tied).
        const double per_param = s.grads.full / s.params.trainable;
        const double one_table = per_param * double(m.vocab) * double(m.hidden);
        const int tables = (s.first_block == 0 ? 1 : 0) + (s.has_head && !m.tie_word_embeddings ? 1 : 0);
        if (one_table >= kGlibcMmapThresholdMaxBytes) grads -= one_table * tables;
    }
    return bytes + std::max(0.0, grads);
}

double glibc_heap_retained_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    return heap_transient_bytes(job, set, s);
}

}  // namespace ftb
