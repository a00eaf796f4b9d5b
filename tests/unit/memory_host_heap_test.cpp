// glibc's heap retention on CPU servers (src/memory/host_heap.cpp) on the tiny inline Llama
// (plan_test_util.hpp: hidden 64, 2 blocks, untied head, 8 tokens per micro-batch), fp32 on a 2-socket Xeon:
// tensors under 32 MiB come from the heap, whose freed space the process keeps; larger ones are mmapped.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

// Gradients of the two blocks and the final norm, fp32: (2 x 36,992 + 64) x 4 = 296,192 bytes.
constexpr double kTinyNonTableGradBytes = (2 * kTinyBlockParams + 64) * 4;

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

// Saved activations and loss bytes at the loss: what the step allocates on top of the model state.
double activations_and_logits(const Job& job) {
    MemoryWalk walk;
    plan_memory(job, &walk);
    for (const MemoryWalkPoint& p : walk.points)
        if (p.phase == MemoryPhase::loss) return p.live.activations_bytes + p.live.logits_bytes;
    ADD_FAILURE() << "no loss point in the walk";
    return 0;
}

TEST(MemoryHostHeap, SmallTensorsAllComeFromTheHeapAndAreHeldOnceMore) {
    // Vocabulary 1,000: tables of 256,000 B and logits of 32,000 B, all under 32 MiB. Every gradient
    // (202,048 parameters x 4 = 808,192 B) is freed by zero_grad and formed again each step.
    const Job job = cpu_job(1000, 8);
    const MemoryResult m = plan_memory(job);
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, activations_and_logits(job) + kTinyParams * 4);
    EXPECT_DOUBLE_EQ(m.device_used_bytes, m.reserved_peak_bytes + m.cuda_context_bytes);
}

TEST(MemoryHostHeap, EmbeddingAndHeadGradientsOf32MiBAreMmapped) {
    // Vocabulary 131,072 x hidden 64 x 4 B = 32 MiB per table: glibc mmaps both table gradients; the 8 x 131,072
    // x 4 B = 4 MiB logits stay on the heap.
    const Job job = cpu_job(131072, 8);
    EXPECT_DOUBLE_EQ(plan_memory(job).allocator_overhead_bytes, activations_and_logits(job) + kTinyNonTableGradBytes);
}

TEST(MemoryHostHeap, LogitsOf32MiBAreMmapped) {
    // 64 tokens x 131,072 x 4 B = 32 MiB of fp32 logits: mmapped, not held by the heap.
    const Job job = cpu_job(131072, 64);
    MemoryWalk walk;
    const MemoryResult m = plan_memory(job, &walk);
    double activations = -1;
    for (const MemoryWalkPoint& p : walk.points)
        if (p.phase == MemoryPhase::loss) activations = p.live.activations_bytes;
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, activations + kTinyNonTableGradBytes);
}

TEST(MemoryHostHeap, GpuKeepsTheCachingAllocatorsFraction) {
    // generic.yaml: allocator_overhead_fraction 0.05 of the allocated peak, whatever the heap would do.
    const MemoryResult m = plan_memory(tiny_job());
    EXPECT_DOUBLE_EQ(m.allocator_overhead_bytes, 0.05 * m.allocated_peak_bytes);
}

}  // namespace
}  // namespace ftb
