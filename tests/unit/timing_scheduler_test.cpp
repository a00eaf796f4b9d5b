// The scheduler alone: hand-made stage work placed on the streams, with numbers worked out by hand.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"
#include "timing/scheduler.hpp"

namespace ftb {
namespace {

double phase(const Ledger& l, const std::string& name) {
    for (const auto& p : l.phases())
        if (p.phase == name) return p.seconds;
    return 0;
}

StageWork stage_of(double fwd_matmul_s, double bwd_matmul_s, double bwd_memory_s, double wall_s) {
    StageWork s;
    s.forward.matmul_s = fwd_matmul_s;
    s.backward.matmul_s = bwd_matmul_s;
    s.backward.memory_s = bwd_memory_s;
    s.gpu_s = fwd_matmul_s + bwd_matmul_s + bwd_memory_s;
    s.wall_s = wall_s;
    // A host-bound micro-batch waits for the host in its backward here: the forward runs at its kernel time.
    s.forward_wall_s = fwd_matmul_s;
    s.backward_wall_s = wall_s - fwd_matmul_s;
    return s;
}

struct Fixture {
    Job job;
    MemoryResult mem;
    TrainingSetup set;
    DeviceRates rates;
    ResourceScale scale;
    CommGroups groups;
};

Fixture fixture(const std::vector<std::pair<std::string, std::string>>& sets, int gpus) {
    Fixture f{plan_test::tiny_job(sets, gpus), {}, {}, {}, {}, {}};
    f.mem = plan_memory(f.job);
    f.set = derive_setup(f.job);
    f.rates = device_rates(f.job.system.device);
    f.groups = build_comm_groups(f.job);
    return f;
}

TEST(TimingScheduler, LedgerAccumulatesOnePhasePerNameAndResourceAndDropsNothingPositive) {
    Ledger l;
    l.add("a", 1, Resource::compute);
    l.add("a", 2, Resource::compute);
    l.add("a", 4, Resource::network);
    l.add("b", 0, Resource::compute);
    l.add("c", -1, Resource::compute);
    ASSERT_EQ(l.phases().size(), 2u);
    EXPECT_DOUBLE_EQ(l.phases()[0].seconds, 3);
    EXPECT_DOUBLE_EQ(l.phases()[1].seconds, 4);
}

TEST(TimingScheduler, ATransferHidesUnderTheBackwardOnceAndOutlastsItOnTheCriticalPath) {
    OverlapWindows w;
    w.backward_s = 3;
    EXPECT_DOUBLE_EQ(w.hide_under_backward(2, Resource::network), 0);   // fully hidden
    EXPECT_DOUBLE_EQ(w.backward_s, 1);
    EXPECT_DOUBLE_EQ(w.rebound_s[size_t(Resource::network)], 0);
    EXPECT_DOUBLE_EQ(w.hide_under_backward(5, Resource::pcie), 4);      // 1 s hidden, 4 s exposed
    EXPECT_DOUBLE_EQ(w.backward_s, 0);
    // The second of compute under the longer transfer ran at the transfer's pace.
    EXPECT_DOUBLE_EQ(w.rebound_s[size_t(Resource::pcie)], 1);
}

TEST(TimingScheduler, ComputeRepeatsPerMicroBatchAndThePipelineBubbleIsPMinusOneOverVirtualStages) {
    // 4 stages, interleaved with 2 virtual stages: (4-1)/2 = 1.5 micro-batch slots idle per step.
    const Fixture f = fixture({{"parallel.pp", "4"}, {"parallel.pp_schedule", "interleaved"},
                               {"parallel.virtual_stages", "2"}, {"train.global_batch", "8"},
                               {"model.num_hidden_layers", "8"}}, 4);
    const StageWork stage = stage_of(1.0, 2.0, 0.5, 4.0);
    const ScheduleInputs in{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 8};
    Schedule s;
    schedule_compute(s, in);
    EXPECT_DOUBLE_EQ(phase(s.ledger, "forward matmuls"), 8.0);
    EXPECT_DOUBLE_EQ(phase(s.ledger, "backward matmuls"), 16.0);
    EXPECT_DOUBLE_EQ(phase(s.ledger, "backward elementwise and memory-bound kernels"), 4.0);
    EXPECT_DOUBLE_EQ(phase(s.ledger, "GPU idle waiting for kernel launches"), 8 * 0.5);
    EXPECT_DOUBLE_EQ(phase(s.ledger, "pipeline bubble"), 1.5 * 4.0);
    // Transfers can hide under the last micro-batch's backward and every micro-batch's forward, as the compute
    // stream sees them: the backward's 2.5 s of kernels and its 0.5 s waiting for the host.
    EXPECT_DOUBLE_EQ(s.windows.backward_s, 3.0);
    EXPECT_DOUBLE_EQ(s.windows.forward_s, 8.0);
}

TEST(TimingScheduler, PipelineTransfersCrossEveryChunkBoundaryAndShrinkWithSequenceParallel) {
    // One micro-batch, 8 tokens x hidden 64 x 2 bytes = 1024 B over the stage boundary, both ways.
    const Fixture plain = fixture({{"parallel.pp", "2"}, {"model.num_hidden_layers", "8"}}, 2);
    const StageWork stage = stage_of(1, 1, 0, 2);
    Schedule one;
    schedule_pipeline_transfers(one, ScheduleInputs{plain.job, plain.mem, plain.set, plain.rates, plain.scale,
                                                    plain.groups, stage, 8, 1});
    const CollectiveCost hop = collective_cost(Collective::send_recv, 8 * 64 * 2, plain.groups.pp);
    EXPECT_DOUBLE_EQ(phase(one.ledger, "pipeline send/recv"), 2 * hop.seconds);
    // Interleaved with 4 chunks per rank: 4 boundaries per micro-batch each way (Narayanan et al. 2021 §2.2.2).
    const Fixture inter = fixture({{"parallel.pp", "2"}, {"model.num_hidden_layers", "8"},
                                   {"parallel.pp_schedule", "interleaved"}, {"parallel.virtual_stages", "4"}}, 2);
    Schedule four;
    schedule_pipeline_transfers(four, ScheduleInputs{inter.job, inter.mem, inter.set, inter.rates, inter.scale,
                                                     inter.groups, stage, 8, 1});
    EXPECT_DOUBLE_EQ(phase(four.ledger, "pipeline send/recv"), 4 * 2 * hop.seconds);
    // Sequence parallel over tp 2: each rank sends its half of the sequence.
    const Fixture sp = fixture({{"parallel.pp", "2"}, {"parallel.tp", "2"}, {"parallel.sequence_parallel", "true"},
                                {"model.num_hidden_layers", "8"}}, 4);
    Schedule half;
    schedule_pipeline_transfers(half, ScheduleInputs{sp.job, sp.mem, sp.set, sp.rates, sp.scale, sp.groups, stage, 8, 1});
    const CollectiveCost half_hop = collective_cost(Collective::send_recv, 8 * 64 * 2 / 2.0, sp.groups.pp);
    EXPECT_DOUBLE_EQ(phase(half.ledger, "pipeline send/recv"), 2 * half_hop.seconds);
}

TEST(TimingScheduler, ContextParallelExchangeShowsOnlyBeyondTheLocalAttention) {
    const Fixture f = fixture({{"parallel.cp", "2"}, {"parallel.cp_exchange", "ring"}, {"train.seq_len", "64"},
                               {"train.global_batch", "1"}}, 2);   // Megatron's p2p ring
    StageWork stage = stage_of(1, 1, 0, 2);
    Schedule hidden;
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;   // seconds: far longer than the exchange
    schedule_context_parallel(hidden, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    EXPECT_DOUBLE_EQ(phase(hidden.ledger, "context-parallel k/v exchange (exposed)"), 0);
    EXPECT_GT(hidden.comm_busy_s, 0);
    Schedule exposed;
    stage.attention_forward_s = 0, stage.attention_backward_s = 0;
    schedule_context_parallel(exposed, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // Nothing to hide under: forward exchange once, backward twice = all the link's busy time.
    EXPECT_NEAR(phase(exposed.ledger, "context-parallel k/v exchange (exposed)"), exposed.comm_busy_s, 1e-18);
}

TEST(TimingScheduler, AllGatherContextParallelIsExposedEvenUnderLongAttention) {
    const Fixture f = fixture({{"parallel.cp", "2"}, {"train.seq_len", "64"}, {"train.global_batch", "1"}}, 2);
    ASSERT_EQ(f.job.spec.parallel.cp_exchange, ContextParallelExchange::all_gather);   // generic.yaml's default
    StageWork stage = stage_of(1, 1, 0, 2);
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;   // seconds: nothing hides an all-gather
    Schedule s;
    schedule_context_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // 32 local tokens x kv 2 heads x 16 x 2 B = 2 kB of k (and of v); gathered over cp 2: 4 kB each. Per block the
    // forward gathers k and v, the backward gathers both again and reduce-scatters dk and dv; 2 blocks.
    const double gathered_bytes = 32 * 32 * 2 * 2.0;
    const double ag = collective_cost(Collective::all_gather, gathered_bytes, f.groups.cp).seconds;
    const double rs = collective_cost(Collective::reduce_scatter, gathered_bytes, f.groups.cp).seconds;
    const double expected = 2 * (2 * ag + rs) * 2;
    EXPECT_NEAR(phase(s.ledger, "context-parallel k/v all-gather and dk/dv reduce-scatter"), expected, 1e-15);
    EXPECT_NEAR(s.comm_busy_s, expected, 1e-15);
}

// DeepSpeed-Ulysses / Transformer Engine "a2a": q, k, v to head-sharded before the attention and the output back,
// the reverse in the backward, all on the critical path; the recompute repeats the forward's two exchanges.
TEST(TimingScheduler, AllToAllContextParallelSendsQkvAndTheOutputEachWayPerPass) {
    const Fixture f = fixture({{"parallel.cp", "2"}, {"parallel.cp_exchange", "all_to_all"}, {"train.seq_len", "64"},
                               {"train.global_batch", "1"}}, 2);
    StageWork stage = stage_of(1, 1, 0, 2);
    stage.attention_forward_s = 1, stage.attention_backward_s = 1;
    Schedule s;
    schedule_context_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    // 32 local tokens x (q 64 + k 32 + v 32) x 2 B = 8 kB of q, k, v; the output 32 x 64 x 2 B = 4 kB. 2 blocks.
    const double qkv = collective_cost(Collective::all_to_all, 32 * 128 * 2.0, f.groups.cp).seconds;
    const double out = collective_cost(Collective::all_to_all, 32 * 64 * 2.0, f.groups.cp).seconds;
    const double expected = 2 * (qkv + out) * 2;
    EXPECT_NEAR(phase(s.ledger, "context-parallel all-to-all of q, k, v and the attention output"), expected, 1e-15);
    stage.recompute.attention_s = 1;
    Schedule recomputed;
    schedule_context_parallel(recomputed, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 32, 1});
    EXPECT_NEAR(recomputed.comm_busy_s, 3 * (qkv + out) * 2, 1e-15);
}

TEST(TimingScheduler, DdpGradientSyncExposesTheLastBucketAndHidesTheRestUnderTheBackward) {
    const Fixture f = fixture({}, 2);
    const StageWork stage = stage_of(1, 1, 0, 2);   // a second of backward: the tiny job's gradients hide under it
    const ScheduleInputs in{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 1};
    Schedule s;
    schedule_compute(s, in);
    schedule_data_parallel(s, in);
    // 202,048 bf16 gradients = 404 kB fit in one 25 MiB bucket: all of it is the last bucket, exposed.
    const double exposed = phase(s.ledger, "data-parallel gradient sync (exposed)");
    EXPECT_GT(exposed, 0);
    EXPECT_DOUBLE_EQ(exposed, s.comm_busy_s);
    EXPECT_DOUBLE_EQ(s.windows.backward_s, 1);
}

// ZeRO-2 keeps only its gradient shard, so the 3 earlier micro-batches of 4 reduce-scatter theirs too, each under
// its own backward and the next forward (here 1 ns each: all but that nanosecond is exposed); ZeRO-1 does not.
TEST(TimingScheduler, ZeroTwoReduceScattersEveryMicroBatchsGradients) {
    const StageWork stage = stage_of(0.5e-9, 0.5e-9, 0, 1e-9);
    for (const int zero : {1, 2}) {
        const Fixture f = fixture({{"parallel.zero", std::to_string(zero)}, {"train.global_batch", "8"}}, 2);
        Schedule s;
        schedule_data_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 4});
        const double grads = f.mem.trainable_params * f.set.reduce_bytes;
        const CollectiveCost rs = collective_cost(Collective::reduce_scatter, grads, f.groups.dp);
        const double earlier = phase(s.ledger, "data-parallel gradient reduce-scatters of the earlier micro-batches (ZeRO-2, exposed)");
        if (zero == 1) {
            EXPECT_EQ(earlier, 0);
            continue;
        }
        EXPECT_NEAR(earlier, 3 * (rs.seconds - 1e-9), 1e-18);
        const CollectiveCost ag = collective_cost(Collective::all_gather, f.mem.trainable_params * f.set.bytes.weight_compute, f.groups.dp);
        EXPECT_NEAR(s.comm_busy_s, 4 * rs.seconds + ag.seconds, 1e-15);   // + the parameter all-gather after the step
    }
}

TEST(TimingScheduler, FsdpCollectivesAcrossNodesHoldThePathsNcclSmsForTheirWholeDuration) {
    // 2 nodes x 8 H100 (NVLink 4) on 200 Gb/s RoCE per GPU (25 GB/s x 0.80 = 20 GB/s), ZeRO-3 over all 16.
    const Fixture f = fixture({{"parallel.zero", "3"}, {"hardware.nodes", "2"}, {"hardware.inter_node", "roce-200"},
                               {"hardware.intra_node", "nvlink4"}, {"train.global_batch", "16"}}, 8);
    ASSERT_EQ(f.groups.dp.nodes, 2);
    StageWork stage = stage_of(1, 2, 0, 3);   // compute-bound only: the SM share is what the compute loses
    stage.layer_forward_s = {0.5, 0.5};        // seconds per block: every gather and reduce-scatter hides
    stage.layer_backward_s = {1.0, 1.0};
    Schedule s;
    schedule_data_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 1});
    // The tiny job's 100 kB collectives are latency-bound (busbw far below the link), yet NCCL's channels are
    // sized for the path: 8 GPUs x 20 GB/s = 160 GB/s of ring bus (below NVLink's 450 x 0.824 = 370.8), i.e.
    // 160 / (190/16) = 13.47 SMs of the H100's 132, held for every second the collectives run beside compute.
    // Every collective hides (blocks of 0.5 s and 1 s), so they run beside compute for all of comm_busy_s.
    const double sm_share = 160.0 / (190.0 / 16.0) / 132.0;
    const double slowed = phase(s.ledger, "compute slowed by overlapped collectives (NCCL SMs and HBM traffic)");
    EXPECT_GT(s.comm_busy_s, 0);
    EXPECT_NEAR(slowed, s.comm_busy_s * sm_share, 1e-9 * slowed);
}

TEST(TimingScheduler, ComputeBesideABandwidthBoundCollectiveLosesTheHbmShareWhenItExceedsTheSmShare) {
    // One node of 8 H100 (NVLink 4: ring bus 450 x 0.824 = 370.8 GB/s), ZeRO-3, blocks of ~0.9 G parameters: the
    // gathers move ~1.9 GB each, bandwidth-bound. SM share: 370.8 / (190/16) = 31.2 of 132 SMs = 23.7%; HBM share:
    // 3 x busbw (~370 GB/s) over 3350 x 750/900 GB/s = ~40%. Compute-bound work loses the larger, the HBM share.
    const Fixture f = fixture({{"parallel.zero", "3"}, {"hardware.intra_node", "nvlink4"},
                               {"model.hidden_size", "8192"}, {"model.intermediate_size", "28672"},
                               {"model.num_attention_heads", "64"}, {"model.num_key_value_heads", "8"},
                               {"train.global_batch", "8"}}, 8);
    StageWork stage = stage_of(1, 2, 0, 3);   // compute-bound only
    stage.layer_forward_s = {0.5, 0.5};        // every collective hides
    stage.layer_backward_s = {1.0, 1.0};
    Schedule s;
    schedule_data_parallel(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 1});
    const double layer_bytes = f.mem.params_per_gpu * 8 / 2 * f.set.bytes.weight_compute;
    const CollectiveCost gather = collective_cost(Collective::all_gather, layer_bytes, f.groups.dp);
    ASSERT_GT(gather.busbw_GBps, 350);   // bandwidth-bound: near the 370.8 GB/s ring
    const double hbm_share = 3 * gather.busbw_GBps / (3350 * 750.0 / 900.0);
    const double sm_share = 370.8 / (190.0 / 16.0) / 132.0;
    ASSERT_GT(hbm_share, sm_share);
    const double slowed = phase(s.ledger, "compute slowed by overlapped collectives (NCCL SMs and HBM traffic)");
    EXPECT_NEAR(slowed, s.comm_busy_s * hbm_share, 1e-9 * slowed);
}

TEST(TimingScheduler, ForeachAdamWStreamsTwentyElementAccessesPerParameter) {
    const Fixture f = fixture({}, 1);
    const StageWork stage = stage_of(1, 1, 0, 2);
    Schedule s;
    schedule_optimizer_step(s, ScheduleInputs{f.job, f.mem, f.set, f.rates, f.scale, f.groups, stage, 8, 1});
    // generic profile: torch's foreach AdamW; pure bf16 keeps parameters and both states in 2 bytes, no master
    // copy: 20 accesses x 2 B = 40 B per parameter at the H100's 3350 GB/s x 750/900.
    EXPECT_DOUBLE_EQ(phase(s.ledger, "optimizer step"), plan_test::kTinyParams * 40 / (3350e9 * 750.0 / 900.0));
}

}  // namespace
}  // namespace ftb
