#include "memory/host_heap.hpp"

#include <algorithm>
#include <vector>

namespace ftb {

namespace {

// Weight matrices of one block, in elements: q, k, v (or one fused qkv), o, and the FFN's two or three
// (per expert). Norms and biases are small enough for the heap and stay counted.
std::vector<double> block_matrices(const LayerSpec& l, bool fused_qkv) {
    const double h = double(l.hidden), q = double(l.q_dim()), kv = double(l.kv_dim()), f = double(l.ffn_intermediate);
    std::vector<double> out;
    if (fused_qkv) out.push_back(h * (q + 2 * kv));
    else out.insert(out.end(), {h * q, h * kv, h * kv});
    out.push_back(q * h);
    const int ffn = l.ffn_kind == FfnKind::gated ? 3 : 2;
    for (int64_t e = 0; e < std::max<int64_t>(1, l.experts); ++e)
        for (int k = 0; k < ffn; ++k) out.push_back(h * f);
    return out;
}

// The gradients a step frees and forms again that glibc serves from the heap: all of them but the
// matrices whose gradient is one tensor of at least the mmap threshold maximum.
double heap_gradient_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    if (s.params.trainable <= 0 || !set.full) return s.grads.full;   // adapters: small matrices only
    const ModelSpec& m = job.model;
    const double per_param = s.grads.full / s.params.trainable;
    double mmapped = 0;
    auto add = [&](double elements) {
        if (per_param * elements >= kGlibcMmapThresholdMaxBytes) mmapped += per_param * elements;
    };
    for (size_t b = 0; b < s.activations.per_block.size(); ++b)
        for (const double elements : block_matrices(m.layers.at(size_t(s.first_block) + b), set.fused_qkv)) add(elements);
    const double table = double(m.vocab) * double(m.hidden);
    if (s.first_block == 0) add(table);                               // the embedding
    if (s.has_head && !m.tie_word_embeddings) add(table);              // the output head
    return std::max(0.0, s.grads.full - mmapped);
}

}  // namespace

double heap_transient_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    const ModelSpec& m = job.model;
    const double tokens = double(set.tokens_per_micro_batch);
    double bytes = s.activations.resident;
    // Eager attention keeps score-sized tensors of micro_batch x heads x seq x seq elements.
    const double heads = double(m.layers.at(size_t(s.first_block)).heads) / double(job.spec.parallel.tp);
    const double one_score = set.bytes.act * heads * double(set.seq_len) * tokens;
    if (one_score >= kGlibcMmapThresholdMaxBytes) bytes -= s.activations.scores_resident;
    const double one_logits = 4.0 * double(m.vocab) * tokens;   // the loss's fp32 logits
    if (s.has_head && one_logits < kGlibcMmapThresholdMaxBytes) bytes += s.loss.peak;
    return bytes + heap_gradient_bytes(job, set, s);
}

double glibc_heap_retained_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    return heap_transient_bytes(job, set, s);
}

}  // namespace ftb
