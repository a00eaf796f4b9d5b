// Eager PyTorch's host time (timing/eager_host.hpp), numbers worked out by hand on tiny inputs.
#include <gtest/gtest.h>

#include "timing/eager_host.hpp"
#include "work_test_util.hpp"

namespace ftb {
namespace {

using plan_test::BuiltWork;
using plan_test::build_work;

TEST(EagerHost, EachPhasePaysItsMeasuredCostPerOp) {
    // 10 forward kernels at 20 us; 20 backward kernels at 32 us, a recomputed forward of 5 kernels at 20 us and
    // 4 AccumulateGrad nodes at 38 us: 200 us and 640 + 100 + 152 = 892 us.
    const PhaseHostSeconds h = eager_host_seconds(10, 20, 5, 4, 1);
    EXPECT_NEAR(h.forward_s, 200e-6, 1e-15);
    EXPECT_NEAR(h.backward_s, 892e-6, 1e-15);
    // weak_points' launch_overhead scale 2: the host twice as fast.
    const PhaseHostSeconds fast = eager_host_seconds(10, 20, 5, 4, 2);
    EXPECT_NEAR(fast.forward_s, 100e-6, 1e-15);
    EXPECT_NEAR(fast.backward_s, 446e-6, 1e-15);
}

TEST(EagerHost, CompiledBlocksAndCpuJobsAreNotIssuedOpByOpFromPython) {
    EXPECT_TRUE(issues_eagerly(build_work({}).work()));
    EXPECT_FALSE(issues_eagerly(build_work({{"train.compile", "true"}}).work()));
    BuiltWork cpu = build_work({});
    cpu.job.system.cpu_only = true;
    EXPECT_FALSE(issues_eagerly(cpu.work()));
}

TEST(EagerHost, GradientTensorsPerBlockFollowWhatTrains) {
    // Full fine-tuning of a Llama block: q, k, v, o, gate, up, down weights and two RMSNorm weights.
    const BuiltWork full = build_work({});
    const LayerSpec& l = full.job.model.layers[0];
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, full.work(), true), 9);
    // LoRA on q and v (separate projections): lora_A and lora_B of each.
    const BuiltWork lora = build_work({{"train.method", "lora"}, {"train.lora.targets", "[q_proj, v_proj]"}});
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, lora.work(), false), 4);
    // LitGPT's fused attention linear holds one lora_A / lora_B pair for q and v together.
    const BuiltWork fused = build_work({{"train.method", "lora"}, {"train.lora.targets", "[q_proj, v_proj]"},
                                   {"train.framework", "litgpt"}});
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, fused.work(), false), 2);
    // A frozen block without adapters (full fine-tuning below the first trained layer) has none.
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, full.work(), false), 0);
}

}  // namespace
}  // namespace ftb
