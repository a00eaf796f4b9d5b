// Megatron-Core's activation_func_fp8_input_store (megatron/core/fusions/fused_bias_swiglu.py SwiGLUFunction keeps
// `input.to(torch.float8_e4m3fn)` for its backward), as NVIDIA's MLPerf Llama 2 70B LoRA runs on one DGX B200 set it
// (FP8_ACT=1). Tiny inline Llama of plan_test_util.hpp (FFN 128, 8 tokens, 2 blocks) on one H100, by hand;
// its two cast kernels are tested with the work builder (timing_work_builder_test.cpp).
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job nemo_lora(bool fp8_store) {
    return tiny_job({{"train.framework", "nemo"}, {"train.method", "lora"}, {"train.lora.rank", "8"},
            {"train.precision", "fp8"}, {"train.activation_func_fp8_input_store", fp8_store ? "true" : "false"}});
}

TEST(MemorySwigluFp8Store, FusedSwigluKeepsGateAndUpInOneByte) {
    const MemoryResult bf16 = plan_memory(nemo_lora(false));
    const MemoryResult fp8 = plan_memory(nemo_lora(true));
    // The fused SwiGLU keeps only its input, gate and up: 2 x 128 elements per token, 2 bytes each, or 1 in fp8.
    EXPECT_DOUBLE_EQ(bf16.layer_activation_per_token.ffn, 2 * 128 * 2);
    EXPECT_DOUBLE_EQ(fp8.layer_activation_per_token.ffn, 2 * 128 * 1);
    EXPECT_DOUBLE_EQ(fp8.layer_activation_per_token.attention, bf16.layer_activation_per_token.attention);
    EXPECT_DOUBLE_EQ(fp8.layer_activation_per_token.norms, bf16.layer_activation_per_token.norms);
    EXPECT_LT(fp8.allocated_peak_bytes, bf16.allocated_peak_bytes);
}

}  // namespace
}  // namespace ftb
