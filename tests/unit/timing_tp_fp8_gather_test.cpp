// Tensor parallelism with sequence parallelism under fp8: a profile whose fp8 linears gather in fp8
// (FrameworkProfile::tp_all_gather_fp8, torchtitan with torchao's Float8 TP styles) moves half the bytes in its
// all-gathers, so a reduce-scatter and an all-gather cost what an all-reduce of 3/4 of the activations does. Tiny
// Llama of plan_test_util.hpp (hidden 64, 2 blocks, 8 tokens) on two H100 SXM.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "plan_test_util.hpp"
#include "timing/scheduler.hpp"

namespace ftb {
namespace {

double tp_phase_seconds(const std::vector<std::pair<std::string, std::string>>& sets) {
    std::vector<std::pair<std::string, std::string>> all = {
        {"parallel.tp", "2"}, {"parallel.dp", "1"}, {"train.global_batch", "1"}};
    all.insert(all.end(), sets.begin(), sets.end());
    const Job job = plan_test::tiny_job(all, 2);
    const TimeResult t = plan_time(job, plan_memory(job));
    double s = 0;
    for (const auto& p : t.breakdown)
        if (p.phase == "tensor-parallel all-reduces") s += p.seconds;
    return s;
}

TEST(TimingTpFp8Gather, TorchtitanFp8GathersCostAnAllReduceOfThreeQuartersOfTheBytes) {
    const std::vector<std::pair<std::string, std::string>> fp8 = {
        {"train.framework", "torchtitan"}, {"train.precision", "fp8"}, {"parallel.sequence_parallel", "true"}};
    const Job job =
        plan_test::tiny_job({{"parallel.tp", "2"}, {"parallel.dp", "1"}, {"train.global_batch", "1"}}, 2);
    const CommGroups groups = build_comm_groups(job);
    const double bytes = 8 * 64 * 2.0;   // tokens x hidden x bf16 activations
    // Two blocks, two collective pairs forward and two backward each, no recompute, one micro-batch.
    const double expected = 2 * 4 * collective_cost(Collective::all_reduce, 0.75 * bytes, groups.tp).seconds;
    EXPECT_NEAR(tp_phase_seconds(fp8), expected, 1e-12);
}

TEST(TimingTpFp8Gather, OnlyWithTheProfileFlagSequenceParallelismAndFp8) {
    const double bf16 = tp_phase_seconds({{"train.framework", "torchtitan"}, {"parallel.sequence_parallel", "true"}});
    const double fp8 = tp_phase_seconds(
        {{"train.framework", "torchtitan"}, {"train.precision", "fp8"}, {"parallel.sequence_parallel", "true"}});
    EXPECT_LT(fp8, bf16);
    // Without sequence parallelism the all-reduces stay whole; a profile without the flag gathers in bf16.
    EXPECT_DOUBLE_EQ(tp_phase_seconds({{"train.framework", "torchtitan"}, {"train.precision", "fp8"},
                                       {"parallel.sequence_parallel", "false"}}),
                     tp_phase_seconds({{"train.framework", "torchtitan"}, {"parallel.sequence_parallel", "false"}}));
    EXPECT_DOUBLE_EQ(tp_phase_seconds({{"train.framework", "megatron"}, {"train.precision", "fp8"},
                                       {"parallel.sequence_parallel", "true"}}),
                     tp_phase_seconds({{"train.framework", "megatron"}, {"parallel.sequence_parallel", "true"}}));
}

}  // namespace
}  // namespace ftb
