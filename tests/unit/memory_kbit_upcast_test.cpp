// PEFT's prepare_model_for_kbit_training under the Hugging Face profile (kbit_training_upcasts_fp32): QLoRA on
// bitsandbytes stores the unquantised parameters in fp32 and runs the residual stream in fp32 (peft
// src/peft/utils/other.py; bitsandbytes nn/modules.py Linear4bit.forward casts its output back to the input's dtype).
// On the tiny inline Llama (plan_test_util.hpp: hidden 64, 2 blocks, vocab 1000, untied head), 8 tokens, every
// figure worked out by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job hf_qlora(const std::string& kernel) {
    return tiny_job({{"train.framework", "hf"}, {"train.method", "qlora"}, {"train.lora.rank", "8"},
                     {"train.qlora.double_quant", "false"}, {"train.qlora.kernel", kernel},
                     {"train.weights", "mixed"}, {"train.activation_checkpointing", "full"}});
}

const MemoryWalkPoint& loss_point(const MemoryWalk& w) {
    for (const MemoryWalkPoint& p : w.points)
        if (p.phase == MemoryPhase::loss) return p;
    ADD_FAILURE() << "no loss point";
    return w.points.front();
}

TEST(MemoryKbitUpcast, BitsandbytesBaseRunsAnFp32StreamAndStoresItsUnquantisedWeightsInFp32) {
    const TrainingSetup bnb = derive_setup(hf_qlora("bitsandbytes"));
    EXPECT_EQ(bnb.bytes.residual, 4);
    EXPECT_EQ(bnb.bytes.norm_out, 4);
    EXPECT_EQ(bnb.frozen_storage_bytes, 4);
    // PEFT skips the cast for GPTQ models: the stream stays in the compute dtype.
    const TrainingSetup gptq = derive_setup(hf_qlora("auto-gptq"));
    EXPECT_EQ(gptq.bytes.residual, 2);
    EXPECT_EQ(gptq.frozen_storage_bytes, 2);
}

TEST(MemoryKbitUpcast, WeightsAndCheckpointsAtTheLossByHand) {
    MemoryWalk walk;
    plan_memory(hf_qlora("bitsandbytes"), &walk);
    const MemoryBreakdown& b = loss_point(walk).live;
    // Weights: NF4 without double quantisation 0.5 + 4/64 = 0.5625 B x 73,728 block weights = 41,472 B; fp32
    // embedding 64,000 + head 64,000 + norms 64 + 4 x 64 = 128,320 params x 4 B = 513,280 B; fp32 LoRA adapters
    // (r 8, all linears): q 8 x 128 + k 8 x 96 + v 8 x 96 + o 8 x 128 + gate/up/down 3 x 8 x 192 = 8,192 per block,
    // 16,384 x 4 B = 65,536 B; one dequantised bf16 matrix in flight, 64 x 128 x 2 B = 16,384 B. Sum 636,672 B
    // (with bf16 unquantised weights it would be 256,640 B less).
    EXPECT_DOUBLE_EQ(b.weights_bytes, 41472 + 513280 + 65536 + 16384);
    // Activations under full recompute: each block's fp32 input, 4 B x 64 x 8 tokens = 2,048 B (1,024 in bf16),
    // two blocks 4,096 B; the final norm before the head keeps HF RMSNorm's fp32 input and rstd, (4 x 64 + 4) x 8
    // = 2,080 B. Sum 6,176 B.
    EXPECT_DOUBLE_EQ(b.activations_bytes, 4096 + 2080);
}

}  // namespace
}  // namespace ftb
