// PyTorch's pass-KV context parallelism (timing/torch_context_parallel.hpp), numbers worked out by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"
#include "timing/rates.hpp"
#include "timing/torch_context_parallel.hpp"

namespace ftb {
namespace {

// 4 local tokens, q 8 wide, k and v 2 wide each, bf16: 32 output elements, 8 of k. The local k/v are 2 x 8 x 2 =
// 32 B, the gather's output 32 x cp, one dk/dv hop 2 x 8 x 4 = 64 B.
TEST(TorchContextParallel, EagerTrafficCountsEveryFp32MergeKernelOfTheLastRank) {
    const PassKvTraffic t = pass_kv_traffic(4, 8, 2, 2, 2, false);
    EXPECT_DOUBLE_EQ(t.kv_gathered_bytes, 64);
    EXPECT_DOUBLE_EQ(t.dkv_hop_bytes, 64);
    // Forward: one k/v concatenation (2 x 32 B), casts in and out (6 + 6 B per output element), one later merge
    // (2 + 9 x 4 = 38 B): 64 + 32 x 50.
    EXPECT_DOUBLE_EQ(t.forward_merge_bytes, 64 + 32 * 50);
    // Backward: dq 4 (zeros) + 2 x 10 (two adds) + 6 (cast) = 30 B per element; dk/dv per k element 8 (zeros)
    // + 36 (first step: two adds, concatenation) + 42 (later step: two half adds, two rebuilds, concatenation)
    // + 12 (cast): 98; plus the concatenation for the rotater.
    EXPECT_DOUBLE_EQ(t.backward_merge_bytes, 32 * 30 + 8 * 98 + 64);
    const PassKvTraffic four = pass_kv_traffic(4, 8, 2, 4, 2, false);
    EXPECT_DOUBLE_EQ(four.kv_gathered_bytes, 128);
    EXPECT_DOUBLE_EQ(four.forward_merge_bytes, 3 * 64 + 32 * (12 + 3 * 38));
    EXPECT_DOUBLE_EQ(four.backward_merge_bytes, 3 * 64 + 32 * (4 + 4 * 10 + 6) + 8 * (8 + 36 + 3 * 42 + 12));
}

TEST(TorchContextParallel, CompiledTrafficIsOneFusedPassPerStep) {
    const PassKvTraffic t = pass_kv_traffic(4, 8, 2, 4, 2, true);
    EXPECT_DOUBLE_EQ(t.dkv_hop_bytes, 64);
    // Each later forward step reads the fp32 output and the bf16 block and writes the output: 10 B per element.
    EXPECT_DOUBLE_EQ(t.forward_merge_bytes, 64 + 3 * 10 * 32);
    // Each of the 4 backward steps: dq, dk and dv at 10 B per element (32 + 2 x 8 elements).
    EXPECT_DOUBLE_EQ(t.backward_merge_bytes, 64 + 4 * 10 * 48);
}

TEST(TorchContextParallel, EagerHidesTheGatherUnderTheLocalStepAndEachHopUnderTheNext) {
    // cp 4: a forward step is 8/4 = 2 s, a backward step 4/4 = 1 s. The 1 s gathers hide (twice forward, once in
    // backward); three 2 s hops each show 1 s beyond their step, the last shows whole: 3 + 2 = 5 s of 3 x 1 + 4 x 2.
    const PassKvExposure e = pass_kv_exposure(1, 2, 4, 8, 4, 2, false);
    EXPECT_DOUBLE_EQ(e.exposed_s, 5);
    EXPECT_DOUBLE_EQ(e.overlapped_s, 6);
    const PassKvExposure compiled = pass_kv_exposure(1, 2, 4, 8, 4, 2, true);
    EXPECT_DOUBLE_EQ(compiled.exposed_s, 11);
    EXPECT_DOUBLE_EQ(compiled.overlapped_s, 0);
}

struct Fixture {
    Job job;
    MemoryResult mem;
    TrainingSetup set;
    DeviceRates rates;
    ResourceScale scale;
    CommGroups groups;
};

Fixture torchtitan_cp2(bool compile) {
    Fixture f{plan_test::tiny_job({{"train.framework", "torchtitan"}, {"parallel.cp", "2"}, {"train.seq_len", "64"},
                                   {"train.global_batch", "1"}, {"train.compile", compile ? "true" : "false"}},
                                  2),
              {}, {}, {}, {}, {}};
    f.mem = plan_memory(f.job);
    f.set = derive_setup(f.job);
    f.rates = device_rates(f.job.system.device);
    f.groups = build_comm_groups(f.job);
    return f;
}

double phase(const Ledger& l, const std::string& name) {
    for (const auto& p : l.phases())
        if (p.phase == name) return p.seconds;
    return 0;
}

TEST(TorchContextParallel, TorchtitanSchedulesThePassKvRingPerBlock) {
    const Fixture f = torchtitan_cp2(false);
    ASSERT_EQ(f.job.spec.parallel.cp_exchange, ContextParallelExchange::pass_kv);   // torchtitan.yaml
    StageWork stage;
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;   // seconds: far longer than any transfer
    Schedule s;
    schedule_context_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // 32 tokens, flash takes GQA: k 32 wide. Only each block's last dk/dv hop (2 x 32 x 32 x 4 B) shows; 2 blocks.
    const double hop = collective_cost(Collective::send_recv, 8192, f.groups.cp).seconds;
    EXPECT_NEAR(phase(s.ledger, "context-parallel k/v all-gather and dk/dv ring (exposed)"), 2 * hop, 1e-15);
    // Merge per block: q 32 x 64 = 2048 elements, k 1024; forward 8192 + 2048 x 50, backward 2048 x 30 + 1024 x 98
    // + 8192.
    const double merge_bytes = 8192 + 2048 * 50 + 2048 * 30 + 1024 * 98 + 8192;
    EXPECT_NEAR(phase(s.ledger, "context-parallel output merge and fp32 gradient accumulation"),
                2 * merge_bytes / f.rates.memory_Bps, 1e-15);
}

TEST(TorchContextParallel, CompiledBlocksWaitForEveryTransfer) {
    const Fixture f = torchtitan_cp2(true);
    StageWork stage;
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;
    Schedule s;
    schedule_context_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // k and v: 2 x 32 x 32 x 2 B = 4 kB local, 8 kB gathered over cp 2; forward and backward gather, two hops.
    const double gather = collective_cost(Collective::all_gather, 8192, f.groups.cp).seconds;
    const double hop = collective_cost(Collective::send_recv, 8192, f.groups.cp).seconds;
    const double exposed = phase(s.ledger, "context-parallel k/v all-gather and dk/dv ring (exposed)");
    EXPECT_NEAR(exposed, 2 * (2 * gather + 2 * hop), 1e-15);
    EXPECT_NEAR(s.comm_busy_s, exposed, 1e-18);
}

TEST(TorchContextParallel, EachPipelineBubbleSlotLastsTheExposedExchangeAndTheMerge) {
    Fixture f{plan_test::tiny_job({{"train.framework", "torchtitan"}, {"parallel.cp", "2"}, {"parallel.pp", "2"},
                                   {"train.seq_len", "64"}, {"train.compile", "true"}},
                                  4),
              {}, {}, {}, {}, {}};
    f.mem = plan_memory(f.job);
    f.set = derive_setup(f.job);
    f.rates = device_rates(f.job.system.device);
    f.groups = build_comm_groups(f.job);
    StageWork stage;
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;
    Schedule s;
    schedule_context_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // 1F1B over 2 stages: 1 idle slot; 1 block per stage. Per block (compiled): two gathers and two hops exposed,
    // and the fused merge: k/v concatenated once (8192 B), one forward step 10 x 2048, two backward steps
    // 10 x (2048 + 2 x 1024), each with the concatenation: 28,672 + 90,112 B.
    const double gather = collective_cost(Collective::all_gather, 8192, f.groups.cp).seconds;
    const double hop = collective_cost(Collective::send_recv, 8192, f.groups.cp).seconds;
    const double merge_s = (28672.0 + 90112.0) / f.rates.memory_Bps;
    EXPECT_NEAR(phase(s.ledger, "pipeline bubble"), 2 * gather + 2 * hop + merge_s, 1e-15);
}

}  // namespace
}  // namespace ftb
