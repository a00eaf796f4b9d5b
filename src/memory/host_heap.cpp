#include "memory/host_heap.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace ftb {

namespace {

// The replay follows a Llama block (RMSNorm, rotary q/k, no biases); other families are replayed as one, their
// norms, biases and position tables being small tensors beside the ones it counts.
CpuBlockShape block_shape(const LayerSpec& l, const TrainingSetup& set) {
    CpuBlockShape b;
    b.hidden = l.hidden;
    b.heads = l.heads;
    b.kv_heads = l.kv_heads;
    b.head_dim = l.head_dim;
    // A mixture-of-experts block is replayed as one dense FFN of the expert width (an approximation: the
    // replay has no router).
    b.ffn = l.ffn_intermediate;
    b.gated = l.ffn_kind == FfnKind::gated;
    b.lora_mask = set.adapters ? set.lora_mask : 0;
    return b;
}

// The replay's input as numbers, for the memo.
std::vector<int64_t> shape_key(const CpuStepShape& s) {
    std::vector<int64_t> key = {s.micro_batch, s.seq_len, s.vocab, s.element_bytes, s.param_bytes, s.full,
                                s.lora_rank, s.tied_embedding, s.steps};
    for (const CpuBlockShape& b : s.blocks)
        key.insert(key.end(), {b.hidden, b.heads, b.kv_heads, b.head_dim, b.ffn, b.gated, int64_t(b.lora_mask)});
    return key;
}

// A plan replans the same job many times (limits, recommendations): each shape is replayed once. The memo is
// emptied when it reaches 4096 shapes (a size, not a measured figure: it bounds the memory of a long `serve`).
std::mutex memo_mutex;
std::map<std::vector<int64_t>, CpuHeapFigures> memo;

CpuHeapFigures replay_once(const CpuStepShape& shape) {
    const std::vector<int64_t> key = shape_key(shape);
    {
        std::lock_guard<std::mutex> lock(memo_mutex);
        if (const auto it = memo.find(key); it != memo.end()) return it->second;
    }
    const CpuHeapFigures figures = replay_cpu_steps(shape);
    std::lock_guard<std::mutex> lock(memo_mutex);
    if (memo.size() >= 4096) memo.clear();
    return memo.emplace(key, figures).first->second;
}

}  // namespace

CpuStepShape cpu_step_shape(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    const ModelSpec& m = job.model;
    CpuStepShape shape;
    shape.micro_batch = job.spec.train.micro_batch;
    shape.seq_len = set.seq_len;   // the padded length at the peak (JobSpec::padded_seq_len)
    shape.vocab = m.vocab;
    shape.element_bytes = std::max<int64_t>(1, int64_t(set.bytes.act));
    shape.param_bytes = std::max<int64_t>(1, int64_t(set.full ? set.trainable_storage_bytes : set.frozen_storage_bytes));
    shape.full = set.full;
    shape.lora_rank = set.adapters ? job.spec.train.lora.rank : 0;
    shape.tied_embedding = m.tie_word_embeddings;
    for (size_t b = 0; b < s.activations.per_block.size(); ++b)
        shape.blocks.push_back(block_shape(m.layers.at(size_t(s.first_block) + b), set));
    return shape;
}

void forget_cpu_heap_replays() {
    std::lock_guard<std::mutex> lock(memo_mutex);
    memo.clear();
}

double glibc_heap_retained_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s) {
    const CpuStepShape shape = cpu_step_shape(job, set, s);
    if (shape.blocks.empty()) return 0;
    const CpuHeapFigures heap = replay_once(shape);
    return double(heap.peak_resident_bytes - heap.peak_in_use_bytes);
}

}  // namespace ftb
