// The host's side of a micro-batch (timing/host_issue.hpp): how often a block's forward Python runs, on the tiny
// Llama of plan_test_util.hpp (2 blocks).
#include <gtest/gtest.h>

#include "plan_test_util.hpp"
#include "timing/host_issue.hpp"

namespace ftb {
namespace {

TEST(TimingHostIssue, RecomputeRunsTheForwardPythonAgain) {
    EXPECT_DOUBLE_EQ(forward_reruns_per_block(plan_test::tiny_job({{"train.activation_checkpointing", "none"}})), 0);
    EXPECT_DOUBLE_EQ(forward_reruns_per_block(plan_test::tiny_job({{"train.activation_checkpointing", "selective"}})), 0);
    EXPECT_DOUBLE_EQ(forward_reruns_per_block(plan_test::tiny_job({{"train.activation_checkpointing", "full"}})), 1);
    EXPECT_DOUBLE_EQ(forward_reruns_per_block(plan_test::tiny_job({{"train.activation_checkpointing", "op"}})), 1);
    // One of the stage's two blocks recomputed: half a forward per block, on average.
    EXPECT_DOUBLE_EQ(forward_reruns_per_block(plan_test::tiny_job({{"train.activation_checkpointing", "full"},
                                                                    {"train.recompute_layers", "1"}})),
                     0.5);
}

TEST(TimingHostIssue, KernelIssueCostsTheLaunchPlusTheFrameworksPerKernelPython) {
    const Job job = plan_test::tiny_job();
    const ResourceScale scale;
    EXPECT_DOUBLE_EQ(host_seconds_per_kernel(job, scale),
                     kKernelLaunchHostSeconds + job.framework.host_overhead_per_kernel_us * 1e-6);
}

}  // namespace
}  // namespace ftb
