// torchao Float8Linear casts (timing/fp8_casts.hpp), counted by hand for the tiny Llama of plan_test_util.hpp
// (hidden 64, q 64, kv 32, FFN 128) on one H100 SXM, 8 tokens.
#include <gtest/gtest.h>

#include "timing/fp8_casts.hpp"
#include "work_test_util.hpp"

namespace ftb {
namespace {

using plan_test::BuiltWork;
using plan_test::build_work;

// H100 SXM HBM 3350 GB/s at 750/900 for streaming kernels (kGpuStreamFraction).
constexpr double kH100StreamBps = 3350e9 * 750.0 / 900.0;

TEST(TimingFp8Casts, CompiledCastIsAnAmaxReadAndACastAndEagerRunsEveryOp) {
    const Fp8CastBytes compiled = torchao_tensorwise_cast_bytes(true, false, 1);
    EXPECT_DOUBLE_EQ(compiled.forward_per_input, 5);      // amax read 2, cast read 2 + write 1
    EXPECT_DOUBLE_EQ(compiled.forward_per_weight, 5);
    EXPECT_DOUBLE_EQ(compiled.backward_per_output, 7);    // its cast + grad_weight's layout copy (1 + 1)
    EXPECT_DOUBLE_EQ(compiled.backward_per_input, 2);
    EXPECT_DOUBLE_EQ(compiled.backward_per_weight, 2);
    EXPECT_DOUBLE_EQ(torchao_tensorwise_cast_bytes(false, false, 1).forward_per_input, 33);
    EXPECT_DOUBLE_EQ(torchao_tensorwise_cast_bytes(true, true, 8).forward_per_weight, 5.0 / 8);
}

// Compiled, one cast per distinct input: q/k/v (in 64, outs 128, 8,192 weights), o (64, 64, 4,096), gate/up
// (64, 256, 16,384), down (128, 64, 8,192). Forward: 8 x (64 + 64 + 64 + 128) x 5 + 36,864 x 5 = 197,120 B in
// (2 casts each, the inputs and 7 weights) 22 kernels. Backward: 8 x (512 outputs x 7 + 320 inputs x 2) +
// 36,864 x 2 = 107,520 B in 7 x 4 + 4 = 32 kernels.
TEST(TimingFp8Casts, TorchtitanFp8BlockPaysItsCastsAndLayoutCopies) {
    const BuiltWork b = build_work({{"train.precision", "fp8"}, {"train.framework", "torchtitan"}, {"train.compile", "true"}});
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    LayerWork w;
    add_fp8_block_casts(w, b.job.model.layers[0], c, 8, true, true);
    EXPECT_DOUBLE_EQ(w.forward.memory_s, 197120 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(w.forward.kernels, 22);
    EXPECT_DOUBLE_EQ(w.backward.memory_s, 107520 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(w.backward.kernels, 32);
}

TEST(TimingFp8Casts, FusedCastsAndBf16AddNothing) {
    for (const auto& sets : std::vector<std::vector<std::pair<std::string, std::string>>>{
             {{"train.precision", "fp8"}, {"train.framework", "generic"}},
             {{"train.precision", "bf16"}, {"train.framework", "torchtitan"}},
             {{"train.precision", "bf16"}, {"train.framework", "megatron"}}}) {
        const BuiltWork b = build_work(sets);
        const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
        LayerWork w;
        add_fp8_block_casts(w, b.job.model.layers[0], c, 8, true, true);
        EXPECT_DOUBLE_EQ(w.forward.memory_s + w.backward.memory_s, 0);
    }
}

// Transformer Engine per element: delayed scaling casts in one pass (read 2, write 1) and its norm writes fp8 itself;
// current scaling adds the amax read (2) and makes the norm write bf16 before a cast (2 + 2 + 1); a TN-only GPU
// (Hopper) writes the transposed copy too (+1 in a cast kernel, or a transpose pass of 1 + 1 after the norm).
TEST(TimingFp8Casts, TransformerEngineCastBytesFollowScalingAndLayout) {
    const TeFp8CastBytes hopper_delayed = transformer_engine_cast_bytes(false, true);
    EXPECT_DOUBLE_EQ(hopper_delayed.own_cast, 4);
    EXPECT_DOUBLE_EQ(hopper_delayed.norm_fused_cast, 2);
    EXPECT_DOUBLE_EQ(hopper_delayed.grad_output_cast, 4);
    EXPECT_DOUBLE_EQ(hopper_delayed.kernels_per_own_cast, 1);
    EXPECT_DOUBLE_EQ(hopper_delayed.kernels_per_norm_fused_cast, 1);
    const TeFp8CastBytes blackwell_delayed = transformer_engine_cast_bytes(false, false);
    EXPECT_DOUBLE_EQ(blackwell_delayed.own_cast, 3);
    EXPECT_DOUBLE_EQ(blackwell_delayed.norm_fused_cast, 0);
    EXPECT_DOUBLE_EQ(blackwell_delayed.kernels_per_norm_fused_cast, 0);
    const TeFp8CastBytes hopper_current = transformer_engine_cast_bytes(true, true);
    EXPECT_DOUBLE_EQ(hopper_current.own_cast, 6);
    EXPECT_DOUBLE_EQ(hopper_current.norm_fused_cast, 6);
    EXPECT_DOUBLE_EQ(hopper_current.kernels_per_own_cast, 2);
    EXPECT_DOUBLE_EQ(transformer_engine_cast_bytes(true, false).norm_fused_cast, 5);
}

// Megatron (te_delayed) on H100, 8 tokens of the tiny block (hidden 64, q 64, kv 32, gated FFN 128). Forward: the
// two norm-cast inputs (qkv, fc1: 64 each) transposed at 2 B, the proj (64) and fc2 (128) inputs cast at 4 B:
// 8 x (128 x 2 + 192 x 4) = 8,192 B in 4 kernels. Backward: the output gradients of qkv (128), proj (64), fc1
// (256) and fc2 (64) at 4 B: 8 x 512 x 4 = 16,384 B in 4 kernels. A frozen weight drops the transposes (3 B, 0 B).
TEST(TimingFp8Casts, MegatronTransformerEngineBlockPaysItsCasts) {
    const BuiltWork b = build_work({{"train.precision", "fp8"}, {"train.framework", "megatron"}});
    const WorkContext c = make_work_context(b.job, b.set, b.rates, b.scale);
    LayerWork w;
    add_fp8_block_casts(w, b.job.model.layers[0], c, 8, true, true);
    EXPECT_DOUBLE_EQ(w.forward.memory_s, 8192 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(w.forward.kernels, 4);
    EXPECT_DOUBLE_EQ(w.backward.memory_s, 16384 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(w.backward.kernels, 4);
    LayerWork frozen;
    add_fp8_block_casts(frozen, b.job.model.layers[0], c, 8, false, true);
    EXPECT_DOUBLE_EQ(frozen.forward.memory_s, 8 * 192 * 3 / kH100StreamBps);
    EXPECT_DOUBLE_EQ(frozen.forward.kernels, 2);
    EXPECT_DOUBLE_EQ(frozen.backward.memory_s, 8 * 512 * 3 / kH100StreamBps);
}

}  // namespace
}  // namespace ftb
