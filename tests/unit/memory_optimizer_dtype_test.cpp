// The optimizer's own dtype under mixed precision (FrameworkProfile mixed_state_bytes / mixed_master_bytes): NeMo
// 24.07's launcher fine-tuning recipe runs Apex DistributedFusedAdam with dtype bf16 and grad_sync_dtype bf16
// (data/frameworks/nemo-2407-sft.yaml), so the moments, the parameter copy and the gradient buffer are 2 bytes an
// element where Megatron's defaults (data/frameworks/nemo.yaml) keep fp32. Tiny inline Llama (plan_test_util.hpp:
// 202,048 parameters), figures by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job full_fp8(const std::string& framework) {
    return tiny_job({{"train.framework", framework}, {"train.method", "full"}, {"train.precision", "fp8"},
                     {"train.weights", "mixed"}, {"train.fp8_weights", "true"}});
}

TEST(MemoryOptimizerDtype, Bf16OptimizerKeepsTwoBytesPerElement) {
    const TrainingSetup sft = derive_setup(full_fp8("nemo-2407-sft"));
    EXPECT_EQ(sft.trainable_storage_bytes, 1);   // fp8 parameters (fp8_params)
    EXPECT_EQ(sft.grad_bytes, 2);
    EXPECT_EQ(sft.state_bytes, 2);
    EXPECT_EQ(sft.master_bytes_per_param, 2);
    EXPECT_EQ(sft.optimizer_bytes_per_param, 2 * 2 + 2);   // two moments + the parameter copy
    const TrainingSetup mcore = derive_setup(full_fp8("nemo"));
    EXPECT_EQ(mcore.grad_bytes, 4);
    EXPECT_EQ(mcore.optimizer_bytes_per_param, 2 * 4 + 4);
}

TEST(MemoryOptimizerDtype, OptimizerStatesShrinkByTheDtypeDifference) {
    const MemoryResult sft = plan_memory(full_fp8("nemo-2407-sft"));
    const MemoryResult mcore = plan_memory(full_fp8("nemo"));
    // 202,048 parameters x (12 - 6) bytes of optimizer state less.
    EXPECT_DOUBLE_EQ(mcore.breakdown.optimizer_bytes - sft.breakdown.optimizer_bytes, 202048.0 * 6);
}

}  // namespace
}  // namespace ftb
