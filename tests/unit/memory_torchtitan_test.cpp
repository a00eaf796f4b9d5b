// torchtitan's memory behaviour on the tiny inline Llama (plan_test_util.hpp: hidden 64, 2 blocks, vocab 1000,
// 8 tokens per micro-batch), every figure worked out by hand from the sources cited in data/frameworks/torchtitan*.yaml
// and src/memory/*.cpp.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

const MemoryWalkPoint* find_point(const MemoryWalk& w, MemoryPhase phase, int block) {
    for (const MemoryWalkPoint& p : w.points)
        if (p.phase == phase && p.block == block) return &p;
    return nullptr;
}

// The tiny model under a torchtitan profile: FSDP2 with fp32 shards (weights mixed), AdamW, the profile's loss.
Job titan_job(const std::string& framework, std::vector<std::pair<std::string, std::string>> sets, int gpus) {
    sets.insert(sets.begin(), {{"train.framework", framework}, {"train.weights", "mixed"}, {"train.loss", "fp32_upcast"},
                               {"parallel.zero", "3"}});
    return tiny_job(sets, gpus);
}

TEST(MemoryTorchtitan, FsdpShardsOverDataAndContextParallelRanks) {
    // fully_shard on the dp_shard x cp mesh: dp 2 x cp 2 = 4 shards of 202,048 parameters = 50,512 per GPU;
    // a profile without it shards over dp alone (101,024).
    const std::vector<std::pair<std::string, std::string>> sets = {{"parallel.dp", "2"}, {"parallel.cp", "2"}};
    EXPECT_DOUBLE_EQ(plan_memory(titan_job("torchtitan", sets, 4)).params_per_gpu, 50512);
    EXPECT_DOUBLE_EQ(plan_memory(titan_job("generic", sets, 4)).params_per_gpu, 101024);
}

TEST(MemoryTorchtitan, LossUpcastsFreesTheLogitsAndCompilesWithTheModel) {
    // 8 tokens x vocab 1000 = 8,000 logits. Eager (torchtitan-2412 never compiles the loss): `del pred` frees the
    // bf16 logits, so the peak is log_softmax's fp32 output and backward's two fp32 gradients: 12 B each = 96,000.
    // Compiled (torchtitan, compile_loss): the saved bf16 logits and their bf16 gradient, 4 B each = 32,000.
    auto loss_logits = [](const std::string& framework, const std::string& compile) {
        MemoryWalk walk;
        plan_memory(titan_job(framework, {{"train.compile", compile}}, 1), &walk);
        const MemoryWalkPoint* p = find_point(walk, MemoryPhase::loss, -1);
        return p ? p->live.logits_bytes : -1.0;
    };
    EXPECT_DOUBLE_EQ(loss_logits("torchtitan-2412", "false"), 96000);
    EXPECT_DOUBLE_EQ(loss_logits("torchtitan-2412", "true"), 96000);
    EXPECT_DOUBLE_EQ(loss_logits("torchtitan", "true"), 32000);
}

TEST(MemoryTorchtitan, LossParallelKeepsFourFp32ShardsInBackward) {
    // tp 2: each rank's 500-entry vocabulary shard, 8 tokens = 4,000 logits. loss_parallel's backward holds the saved
    // log-softmax output, zeros_like(x), the sum (grad_input + exp(x)) and the product: 16 B each = 64,000.
    MemoryWalk walk;
    plan_memory(titan_job("torchtitan-2412", {{"parallel.tp", "2"}, {"parallel.dp", "1"}}, 2), &walk);
    const MemoryWalkPoint* p = find_point(walk, MemoryPhase::loss, -1);
    ASSERT_NE(p, nullptr);
    EXPECT_DOUBLE_EQ(p->live.logits_bytes, 64000);
}

TEST(MemoryTorchtitan, CollectiveStreamsKeepTheAllGatherOutputsAndTheShardedGradients) {
    // dp 2. All-gather copy-in stream: the root unit (embedding 64,000 + head 64,000 + final norm 64 = 128,064
    // parameters) and a block (36,992), in bf16: 256,128 + 73,984 = 330,112. Reduce-scatter stream: the sharded
    // fp32 gradients 202,048 x 4 / 2 = 404,096 and one block's fp32 output shard 36,992 x 4 / 2 = 73,984.
    const MemoryResult m = plan_memory(titan_job("torchtitan", {{"parallel.dp", "2"}}, 2));
    EXPECT_DOUBLE_EQ(m.side_stream_pool_bytes, 330112 + 404096 + 73984);
    EXPECT_GE(m.reserved_peak_bytes, m.compute_stream_peak_bytes + m.side_stream_pool_bytes);
}

TEST(MemoryTorchtitan, PipelinedFsdpKeepsTheStageGatheredAndAccumulatesFp32Gradients) {
    // pp 2, dp 2, 2 micro-batches; the last stage holds the peak. It holds block 1 (36,992), the final norm (64) and
    // the head (64,000): 101,056 parameters, gathered in bf16 from the first forward (202,112) beside the fp32
    // shards (101,056 x 4 / 2 = 202,112); their gradients accumulate unsharded in fp32 from the first backward
    // (404,224), so the second micro-batch's forward meets them, while the sharded gradients form at the step's end.
    // The stage keeps the first micro-batch's bf16 logits (8,000 x 2 = 16,000) beside the second one's loss, whose
    // logits the schedule also keeps: 14 bytes per logit (112,000), 128,000 in all.
    MemoryWalk walk;
    plan_memory(titan_job("torchtitan", {{"parallel.pp", "2"}, {"parallel.dp", "2"}, {"train.global_batch", "4"}}, 4),
                &walk);
    ASSERT_EQ(walk.stage, 1);
    const MemoryWalkPoint* end_of_forward = find_point(walk, MemoryPhase::forward, 1);
    const MemoryWalkPoint* loss = find_point(walk, MemoryPhase::loss, -1);
    ASSERT_NE(end_of_forward, nullptr);
    ASSERT_NE(loss, nullptr);
    EXPECT_DOUBLE_EQ(end_of_forward->live.gradients_bytes, 404224);
    EXPECT_DOUBLE_EQ(end_of_forward->live.weights_bytes, 202112 + 202112);
    EXPECT_DOUBLE_EQ(loss->live.logits_bytes, 128000);
}

}  // namespace
}  // namespace ftb
