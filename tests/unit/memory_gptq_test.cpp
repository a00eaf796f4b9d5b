// auto-gptq QLoRA memory (the path Qwen's finetune.py runs) on the tiny inline Llama (plan_test_util.hpp: hidden 64,
// intermediate 128, 4 heads / 2 kv heads of 16, 2 blocks), every figure worked out by hand from
// auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py (v0.4.2) as cited in src/memory/training_setup.cpp and
// src/memory/model_state.cpp.
// One block's quantised linears: q 64x64 = 4,096, k and v 64x32 = 2,048 each, o 4,096, gate/up/down 64x128 = 8,192
// each: 36,864 weights; both blocks 73,728; the largest matrix 8,192.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

MemoryWalk walk_of(const std::vector<std::pair<std::string, std::string>>& sets) {
    std::vector<std::pair<std::string, std::string>> all = {{"train.method", "qlora"}, {"train.lora.rank", "8"},
                                                            {"train.qlora.double_quant", "false"}};
    all.insert(all.end(), sets.begin(), sets.end());
    MemoryWalk walk;
    plan_memory(tiny_job(all), &walk);
    return walk;
}

const MemoryWalkPoint& point(const MemoryWalk& w, MemoryPhase phase, int block) {
    for (const MemoryWalkPoint& p : w.points)
        if (p.phase == phase && p.block == block) return p;
    ADD_FAILURE() << "no walk point for block " << block;
    return w.points.front();
}

TEST(MemoryGptq, StoresHalfAByteAWeightPlusAScaleAndAZeroPerGroupOf128Rows) {
    // qweight 0.5 B + fp16 scale 2/128 + int32-packed 4-bit zero 0.5/128 = 0.51953125 B per weight -> 38,304 B;
    // bitsandbytes NF4 without double quantisation: 0.5 + 4/64 = 0.5625 -> 41,472 B: 3,168 B more. Below 128 tokens
    // auto-gptq runs its CUDA kernel (no PyTorch dequantisation), so nothing else differs.
    const MemoryWalk gptq = walk_of({{"train.qlora.kernel", "auto-gptq"}});
    const MemoryWalk bnb = walk_of({{"train.qlora.kernel", "bitsandbytes"}});
    EXPECT_DOUBLE_EQ(point(bnb, MemoryPhase::loss, -1).live.weights_bytes -
                         point(gptq, MemoryPhase::loss, -1).live.weights_bytes,
                     3168);
}

TEST(MemoryGptq, FullRecomputeHoldsTheRecomputedBlocksFp16WeightsAndTheInt32Unpack) {
    // At 128 tokens auto-gptq dequantises in PyTorch: the int32 unpack + its int8 cast, 5 B per weight of the
    // largest matrix (40,960 B) in place of one bf16 matrix (16,384 B); in backward the recomputed block's
    // matmuls keep its dequantised bf16 weights, 36,864 x 2 = 73,728 B. In forward nothing is kept (no grad).
    const MemoryWalk torch_path = walk_of({{"train.qlora.kernel", "auto-gptq"}, {"train.seq_len", "128"},
                                           {"train.activation_checkpointing", "full"}});
    const MemoryWalk cuda_kernel = walk_of({{"train.qlora.kernel", "auto-gptq"}, {"train.seq_len", "127"},
                                            {"train.activation_checkpointing", "full"}});
    EXPECT_DOUBLE_EQ(point(torch_path, MemoryPhase::loss, -1).live.weights_bytes -
                         point(cuda_kernel, MemoryPhase::loss, -1).live.weights_bytes,
                     40960 - 16384);
    EXPECT_DOUBLE_EQ(point(torch_path, MemoryPhase::backward, 1).live.weights_bytes -
                         point(cuda_kernel, MemoryPhase::backward, 1).live.weights_bytes,
                     40960 - 16384 + 73728);
}

TEST(MemoryGptq, WithoutRecomputeEveryBlockKeepsItsDequantisedWeightsFromForward) {
    // No recompute: both blocks' bf16 weights, 73,728 x 2 = 147,456 B, from the end of forward on.
    const MemoryWalk torch_path = walk_of({{"train.qlora.kernel", "auto-gptq"}, {"train.seq_len", "128"}});
    const MemoryWalk cuda_kernel = walk_of({{"train.qlora.kernel", "auto-gptq"}, {"train.seq_len", "127"}});
    EXPECT_DOUBLE_EQ(point(torch_path, MemoryPhase::loss, -1).live.weights_bytes -
                         point(cuda_kernel, MemoryPhase::loss, -1).live.weights_bytes,
                     40960 - 16384 + 147456);
}

}  // namespace
}  // namespace ftb
