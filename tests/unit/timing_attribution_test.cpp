// Attribution alone: hand-made ledgers turned into the step's figures.
#include <gtest/gtest.h>

#include "plan_test_util.hpp"
#include "timing/attribution.hpp"

namespace ftb {
namespace {

TEST(TimingAttribution, ComputeUnderALongerTransferMovesToTheTransferInProportion) {
    Ledger l;
    l.add("matmuls", 3, Resource::compute);
    l.add("elementwise", 1, Resource::memory_bandwidth);
    l.add("gathers (exposed)", 1, Resource::network);
    std::array<double, kResourceCount> rebound{};
    rebound[size_t(Resource::network)] = 2;
    const StreamBusy busy = stream_busy(l.phases());
    EXPECT_DOUBLE_EQ(busy.compute_s, 3);
    EXPECT_DOUBLE_EQ(busy.memory_s, 1);
    EXPECT_DOUBLE_EQ(busy.total_s, 5);
    attribute_hidden_compute(l, rebound);
    TimeResult t;
    set_step_totals(t, l.phases());
    EXPECT_DOUBLE_EQ(t.step_seconds, 5);   // moving seconds never changes the step
    EXPECT_EQ(t.bottleneck, Resource::network);
    EXPECT_DOUBLE_EQ(t.bottleneck_share, 3.0 / 5);
    ASSERT_EQ(t.breakdown.size(), 4u);
    EXPECT_EQ(t.breakdown[0].phase, "compute hidden under network transfers (they set the pace)");
    EXPECT_DOUBLE_EQ(t.breakdown[0].seconds, 2);
    EXPECT_DOUBLE_EQ(t.breakdown[1].seconds, 1.5);   // matmuls 3 - 3 * 2/4
    EXPECT_DOUBLE_EQ(t.breakdown[2].seconds, 1);     // the exposed gathers
    EXPECT_DOUBLE_EQ(t.breakdown[3].seconds, 0.5);   // elementwise 1 - 1 * 2/4
}

TEST(TimingAttribution, NeverMovesMoreThanTheStreamRan) {
    Ledger l;
    l.add("matmuls", 1, Resource::compute);
    std::array<double, kResourceCount> rebound{};
    rebound[size_t(Resource::pcie)] = 3;
    rebound[size_t(Resource::network)] = 1;
    attribute_hidden_compute(l, rebound);
    double pcie = 0, network = 0, compute = 0;
    for (const auto& p : l.phases()) {
        if (p.resource == Resource::pcie) pcie += p.seconds;
        if (p.resource == Resource::network) network += p.seconds;
        if (p.resource == Resource::compute) compute += p.seconds;
    }
    EXPECT_DOUBLE_EQ(compute, 0);
    EXPECT_DOUBLE_EQ(pcie, 0.75);
    EXPECT_DOUBLE_EQ(network, 0.25);
}

TEST(TimingAttribution, HardwareFlopsCountEveryStageOfEveryReplica) {
    ParallelSpec par;
    par.pp = 4, par.tp = 2, par.cp = 1, par.dp = 3;
    StageWork s;
    s.first_stage_flops = 10, s.middle_stage_flops = 10, s.last_stage_flops = 16;
    // (10 + 2 x 10 + 16) per micro-batch per TP rank, 5 micro-batches, 2 TP ranks, 3 replicas.
    EXPECT_DOUBLE_EQ(hardware_flops_per_step(par, s, 5), 46.0 * 5 * 2 * 3);
    // A first stage one block lighter than the two in between (the embedding counted as a layer).
    s.first_stage_flops = 8;
    EXPECT_DOUBLE_EQ(hardware_flops_per_step(par, s, 5), 44.0 * 5 * 2 * 3);
    s.first_stage_flops = 10;
    par.pp = 1;
    EXPECT_DOUBLE_EQ(hardware_flops_per_step(par, s, 5), 10.0 * 5 * 2 * 3);
}

TEST(TimingAttribution, ThroughputAndUtilisationFollowFromStepTimeAndFlops) {
    const Job job = plan_test::tiny_job();
    TimeResult t;
    t.step_seconds = 0.5;
    set_throughput(t, job, 8, StepFlops{1e12, 1.5e12, 2e12});
    EXPECT_DOUBLE_EQ(t.tokens_per_step, 8);
    EXPECT_DOUBLE_EQ(t.tokens_per_second, 16);
    EXPECT_DOUBLE_EQ(t.tokens_per_second_per_gpu, 16);
    const double peak = peak_flops(job.system.device, Precision::bf16);
    EXPECT_DOUBLE_EQ(peak, job.system.device.peak_tflops.bf16 * 1e12);
    EXPECT_DOUBLE_EQ(t.mfu, 1e12 / (peak * 0.5));
    EXPECT_DOUBLE_EQ(t.mfu_6n, 1.5e12 / (peak * 0.5));
    EXPECT_DOUBLE_EQ(t.hfu, 2e12 / (peak * 0.5));
}

}  // namespace
}  // namespace ftb
