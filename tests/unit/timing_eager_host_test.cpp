// Eager PyTorch's host time (timing/eager_host.hpp), numbers worked out by hand on tiny inputs.
#include <gtest/gtest.h>

#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "timing/eager_host.hpp"
#include "timing/rates.hpp"

namespace ftb {
namespace {

struct Context {
    Job job;
    TrainingSetup set;
    DeviceRates rates;
    ResourceScale scale;
    WorkContext work() const { return make_work_context(job, set, rates, scale); }
};

Context context(const std::vector<std::pair<std::string, std::string>>& sets) {
    Context x{plan_test::tiny_job(sets), {}, {}, {}};
    x.set = derive_setup(x.job);
    x.rates = device_rates(x.job.system.device);
    return x;
}

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
    EXPECT_TRUE(issues_eagerly(context({}).work()));
    EXPECT_FALSE(issues_eagerly(context({{"train.compile", "true"}}).work()));
    Context cpu = context({});
    cpu.job.system.cpu_only = true;
    EXPECT_FALSE(issues_eagerly(cpu.work()));
}

TEST(EagerHost, GradientTensorsPerBlockFollowWhatTrains) {
    // Full fine-tuning of a Llama block: q, k, v, o, gate, up, down weights and two RMSNorm weights.
    const Context full = context({});
    const LayerSpec& l = full.job.model.layers[0];
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, full.work(), true), 9);
    // LoRA on q and v (separate projections): lora_A and lora_B of each.
    const Context lora = context({{"train.method", "lora"}, {"train.lora.targets", "[q_proj, v_proj]"}});
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, lora.work(), false), 4);
    // LitGPT's fused attention linear holds one lora_A / lora_B pair for q and v together.
    const Context fused = context({{"train.method", "lora"}, {"train.lora.targets", "[q_proj, v_proj]"},
                                   {"train.framework", "litgpt"}});
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, fused.work(), false), 2);
    // A frozen block without adapters (full fine-tuning below the first trained layer) has none.
    EXPECT_DOUBLE_EQ(block_grad_tensors(l, full.work(), false), 0);
}

}  // namespace
}  // namespace ftb
