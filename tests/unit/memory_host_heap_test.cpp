// glibc's heap retention on CPU servers (src/memory/host_heap.cpp) on the tiny inline Llama
// (plan_test_util.hpp: hidden 64, 2 blocks of 4 heads (head_dim 16) and 2 kv heads, FFN 128, untied head), fp32 on
// a 2-socket Xeon: the plan's allocator overhead is what the replay of the step's allocations
// (memory/cpu_step_heap.hpp) holds beyond its live peak.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "memory/cpu_step_heap.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job cpu_job(int64_t vocab, int64_t seq_len, const std::string& method = "full") {
    Json doc = tiny_job_document(2);
    doc["model"]["vocab_size"] = vocab;
    doc["train"]["precision"] = "fp32";
    doc["train"]["seq_len"] = seq_len;
    doc["train"]["method"] = method;
    if (method == "lora") doc["train"]["lora"] = Json{{"rank", 8}};
    doc["hardware"] = Json{{"system", "dell-poweredge-r760-2x-xeon-8480"}};
    return job_from_document(doc, "tiny-cpu.yaml");
}

// The tiny model as the replay takes it, by hand.
CpuStepShape tiny_shape(int64_t vocab, int64_t seq_len, uint32_t lora_mask = 0) {
    CpuStepShape s;
    s.seq_len = seq_len;
    s.vocab = vocab;
    s.full = lora_mask == 0;
    s.lora_rank = lora_mask == 0 ? 0 : 8;
    for (int i = 0; i < 2; ++i) s.blocks.push_back({64, 4, 2, 16, 128, true, lora_mask});
    return s;
}

double held_bytes(const CpuStepShape& s) {
    const CpuHeapFigures f = replay_cpu_steps(s);
    return double(f.peak_resident_bytes - f.peak_in_use_bytes);
}

TEST(MemoryHostHeap, CpuOverheadIsTheReplaysHold) {
    const MemoryResult m = plan_memory(cpu_job(1000, 8));
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, held_bytes(tiny_shape(1000, 8)));
    EXPECT_DOUBLE_EQ(m.device_used_bytes, m.reserved_peak_bytes + m.cuda_context_bytes);
}

TEST(MemoryHostHeap, LoraReplaysTheAdaptersOnEveryLinear) {
    // lora with no targets: all linear layers of the blocks carry rank-8 adapters; only they train.
    const MemoryResult m = plan_memory(cpu_job(1000, 64, "lora"));
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, held_bytes(tiny_shape(1000, 64, kAllLinears)));
}

TEST(MemoryHostHeap, LongerSequencesReplayTheirOwnTensors) {
    // 64 tokens x 131,072 x 4 B = 32 MiB of fp32 logits: the replay sees the job's vocabulary and sequence.
    const MemoryResult m = plan_memory(cpu_job(131072, 64));
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, held_bytes(tiny_shape(131072, 64)));
}

TEST(MemoryHostHeap, GpuKeepsTheCachingAllocatorsFraction) {
    // generic.yaml: allocator_overhead_fraction 0.05 of the allocated peak, whatever the heap would do.
    const MemoryResult m = plan_memory(tiny_job());
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, 0.05 * m.allocated_peak_bytes);
}

}  // namespace
}  // namespace ftb
