// LoRA on fp8 primary weights (Transformer Engine fp8_model_init / NeMo MegatronMixedPrecision(fp8_params=True), as
// NeMo's MLPerf Llama 2 70B LoRA recipe sets, scripts/llm/performance/mlperf_lora_llama2_70b.py): the frozen base is
// stored in fp8, 1 byte per weight; the adapters (Megatron-Core parallel linears, not TE modules) stay bf16 with an
// fp32 master in the optimizer. Tiny inline Llama (plan_test_util.hpp: 202,048 parameters, 2 blocks), figures by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job nemo_lora(bool fp8_weights) {
    return tiny_job({{"train.framework", "nemo"}, {"train.method", "lora"}, {"train.lora.rank", "8"},
                     {"train.precision", "fp8"}, {"train.weights", "mixed"},
                     {"train.fp8_weights", fp8_weights ? "true" : "false"}});
}

TEST(MemoryFp8Base, FrozenBaseInOneByteAdaptersInBf16) {
    const TrainingSetup s = derive_setup(nemo_lora(true));
    EXPECT_EQ(s.frozen_storage_bytes, 1);
    EXPECT_EQ(s.trainable_storage_bytes, 2);
    MemoryWalk walk;
    plan_memory(nemo_lora(true), &walk);
    MemoryWalk bf16;
    plan_memory(nemo_lora(false), &bf16);
    const auto weights_at_loss = [](const MemoryWalk& w) {
        for (const MemoryWalkPoint& p : w.points)
            if (p.phase == MemoryPhase::loss) return p.live.weights_bytes;
        ADD_FAILURE() << "no loss point";
        return 0.0;
    };
    // Base 202,048 parameters x 1 B; adapters r 8 on every linear, 8,192 per block x 2 = 16,384 x 2 B = 32,768 B.
    EXPECT_DOUBLE_EQ(weights_at_loss(walk), 202048 + 32768);
    // Without fp8 primary weights the base is bf16: 202,048 B more.
    EXPECT_DOUBLE_EQ(weights_at_loss(bf16) - weights_at_loss(walk), 202048);
}

}  // namespace
}  // namespace ftb
