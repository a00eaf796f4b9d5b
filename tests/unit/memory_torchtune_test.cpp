// torchtune's memory behaviour on the tiny inline Llama (plan_test_util.hpp: hidden 64, 2 blocks, vocab 1000,
// 8 tokens per micro-batch), every figure worked out by hand from the sources cited in src/memory/*.cpp and
// data/frameworks/torchtune.yaml.
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

TEST(MemoryTorchtune, TorchaoNf4KeepsInt8ScalersAndOneBf16FactorPer256Blocks) {
    // torchao to_nf4(block_size=64, scaler_block_size=256): 0.5 B of packed codes + 1 int8 scaler per 64 weights
    // + one bf16 quantization_factor per 256 scalers = 0.5 + 0.015625 + 2/16384 = 0.5157470703125 B per weight.
    // bitsandbytes with double quantisation keeps an fp32 constant per 256 blocks instead: 0.515869140625.
    // Quantised weights: the two blocks' matrices, 73,728 -> torchao 38,025, bitsandbytes 38,034: 9 bytes apart.
    auto with_kernel = [](const std::string& kernel) {
        return plan_memory(tiny_job({{"train.method", "qlora"}, {"train.lora.rank", "8"},
                                     {"train.qlora.double_quant", "true"}, {"train.qlora.kernel", kernel},
                                     {"train.global_batch", "2"}}));
    };
    const MemoryResult torchao = with_kernel("torchao");
    const MemoryResult bnb = with_kernel("bitsandbytes");
    ASSERT_EQ(torchao.peak_phase, bnb.peak_phase);
    EXPECT_DOUBLE_EQ(bnb.breakdown.weights_bytes - torchao.breakdown.weights_bytes, 9);
}

TEST(MemoryTorchtune, ChunkedOutputLossKeepsBf16ChunksAndOneChunkInFlight) {
    // CEWithChunkedOutputLoss, 8 chunks, 8 tokens x vocab 1000 = 8,000 logits.
    // Compiled: bf16 logits 16,000 + the bf16 gradient of the chunk in backward 2 x 8,000 / 8 = 2,000 -> 18,000.
    // Eager: + every chunk's fp32 log_softmax output 32,000 + the chunk's two fp32 gradients 2 x 4 x 1,000 = 8,000
    // -> 56,000. After the loss the recipe drops the logits (`del logits`): nothing is held through backward.
    auto loss_point = [](const std::string& compile) {
        MemoryWalk walk;
        plan_memory(tiny_job({{"train.framework", "torchtune"}, {"train.loss", "chunked"},
                              {"train.compile", compile}, {"train.optimizer_in_backward", "false"}}),
                    &walk);
        return walk;
    };
    const MemoryWalk compiled = loss_point("true");
    const MemoryWalk eager = loss_point("false");
    const MemoryWalkPoint* c = find_point(compiled, MemoryPhase::loss, -1);
    const MemoryWalkPoint* e = find_point(eager, MemoryPhase::loss, -1);
    ASSERT_NE(c, nullptr);
    ASSERT_NE(e, nullptr);
    EXPECT_DOUBLE_EQ(c->live.logits_bytes, 18000);
    EXPECT_DOUBLE_EQ(e->live.logits_bytes, 56000);
    for (const MemoryWalkPoint& p : compiled.points)
        if (p.phase == MemoryPhase::backward) {
            EXPECT_DOUBLE_EQ(p.live.logits_bytes, 0) << "block " << p.block;
        }
}

TEST(MemoryTorchtune, TiedHeadGradientLivesFromTheLossToTheEmbeddingBackward) {
    // Tied embedding (1000 x 64 = 64,000 weights), full fine-tune in bf16, optimizer in backward: the head's
    // gradient (64,000 x 2 = 128,000 bytes) forms first and stays in the AccumulateGrad input buffer until the
    // embedding's backward adds the second use. With the chunked loss the head runs chunk by chunk, so during the
    // head's backward (the walk's second loss point) the buffer and the chunk's new gradient are both live: 256,000,
    // beside the logits' bf16 gradient 8 x 1000 x 2 = 16,000. Each block in backward keeps the held
    // 128,000 + one block's gradients (in backward: the largest block, 36,992 x 2 = 73,984, spread over the 2
    // blocks: 36,992 per block formed). The embedding's backward: held 128,000 + the blocks' 73,984 + its own dense
    // gradient 128,000 = 329,984.
    MemoryWalk walk;
    plan_memory(tiny_job({{"model.tie_word_embeddings", "true"}, {"train.framework", "torchtune"},
                          {"train.loss", "chunked"}, {"train.compile", "true"},
                          {"train.optimizer_in_backward", "true"}, {"train.activation_checkpointing", "none"}}),
                &walk);
    const MemoryWalkPoint* loss = find_point(walk, MemoryPhase::loss, -1);
    const MemoryWalkPoint* top = find_point(walk, MemoryPhase::backward, 1);
    ASSERT_NE(loss, nullptr);
    ASSERT_NE(top, nullptr);
    EXPECT_DOUBLE_EQ(loss->live.gradients_bytes, 0);
    const MemoryWalkPoint* head = loss + 1;
    ASSERT_EQ(head->phase, MemoryPhase::loss);
    EXPECT_DOUBLE_EQ(head->live.gradients_bytes, 256000);
    EXPECT_DOUBLE_EQ(head->live.logits_bytes, 16000);
    EXPECT_DOUBLE_EQ(top->live.gradients_bytes, 128000 + 36992);
    const MemoryWalkPoint& last = walk.points.back();
    ASSERT_EQ(last.phase, MemoryPhase::optimizer_step);
    const MemoryWalkPoint& embedding = walk.points[walk.points.size() - 2];
    ASSERT_EQ(embedding.phase, MemoryPhase::backward);
    EXPECT_DOUBLE_EQ(embedding.live.gradients_bytes, 128000 + 73984 + 128000);
}

TEST(MemoryTorchtune, CompiledBlocksKeepInductorsSavedSetAndTheUnchunkedHeadIsFp32) {
    // Tiny Llama, no recompute, 8 tokens, vocab 1000, hidden 64, FFN 128, 2 blocks, pure bf16.
    // Logits: the model returns fp32 (`self.output(h).float()`). Eager: 3 fp32 copies -> 1000 x 12 x 8 = 96,000;
    // compiled loss: fp32 input + fp32 gradient + its bf16 cast -> 1000 x 10 x 8 = 80,000.
    // Activations: an eager RMSNorm (fp32 upcast, trainable weight) keeps 4 x 64 + 4 + 2 x 64 = 388 B per token,
    // compiled 2 x 64 + 4 = 132; the gated FFN drops silu's output, 2 x 128 = 256. Per token and block
    // 2 x 256 + 256 = 768, x 8 tokens x 2 blocks = 12,288, plus the final norm 256 x 8 = 2,048 -> 14,336.
    auto loss_point = [](const std::string& compile) {
        MemoryWalk walk;
        plan_memory(tiny_job({{"train.framework", "torchtune"}, {"train.loss", "standard"},
                              {"train.activation_checkpointing", "none"}, {"train.compile", compile},
                              {"train.optimizer_in_backward", "false"}}),
                    &walk);
        return *find_point(walk, MemoryPhase::loss, -1);
    };
    const MemoryWalkPoint compiled = loss_point("true");
    const MemoryWalkPoint eager = loss_point("false");
    EXPECT_DOUBLE_EQ(eager.live.logits_bytes, 96000);
    EXPECT_DOUBLE_EQ(compiled.live.logits_bytes, 80000);
    EXPECT_DOUBLE_EQ(eager.live.activations_bytes - compiled.live.activations_bytes, 14336);
}

TEST(MemoryTorchtune, Fsdp2HoldsThePreviousUnitsReduceScatterInputThroughBackward) {
    // fully_shard's post_backward keeps the reduce-scatter input it returns (a copy of the unit's unsharded
    // gradients) in comm_ctx.reduce_scatter_state until the next unit's post_backward: while a block's gradients
    // form, the block above's copy is still there. One block: 4,096 + 2,048 + 2,048 + 4,096 + 3 x 8,192 + 128 norms
    // = 36,992 bf16 gradients = 73,984 bytes more in every backward point of the 8-GPU full fine-tune.
    auto walk_with = [](bool holds) {
        Job job = tiny_job({{"train.framework", "torchtune"}, {"parallel.zero", "3"}, {"offload.optimizer", "cpu"},
                            {"offload.params", "cpu"}, {"train.global_batch", "8"}},
                           8);
        job.framework.fsdp2_holds_reduce_scatter_input = holds;
        MemoryWalk walk;
        plan_memory(job, &walk);
        return walk;
    };
    const MemoryWalk held = walk_with(true);
    const MemoryWalk freed = walk_with(false);
    const MemoryWalkPoint* h = find_point(held, MemoryPhase::backward, 0);
    const MemoryWalkPoint* f = find_point(freed, MemoryPhase::backward, 0);
    ASSERT_NE(h, nullptr);
    ASSERT_NE(f, nullptr);
    EXPECT_DOUBLE_EQ(h->live.gradients_bytes - f->live.gradients_bytes, 73984);
}

}  // namespace
}  // namespace ftb
