// FSDP2's compute-stream copies (timing/fsdp2_copies.hpp), numbers worked out by hand.
#include <gtest/gtest.h>

#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "timing/fsdp2_copies.hpp"
#include "timing/rates.hpp"

namespace ftb {
namespace {

struct Context {
    Job job;
    TrainingSetup set;
    DeviceRates rates;
    ResourceScale scale;
};

Context context(const std::vector<std::pair<std::string, std::string>>& sets, int gpus) {
    Context x{plan_test::tiny_job(sets, gpus), {}, {}, {}};
    x.set = derive_setup(x.job);
    x.rates = device_rates(x.job.system.device);
    return x;
}

TEST(Fsdp2Copies, OnlyFullyShardedTorchtitanUnitsOverMoreThanOneRankCopy) {
    Context sharded = context({{"train.framework", "torchtitan"}, {"parallel.zero", "3"}}, 2);
    EXPECT_TRUE(fsdp2_unit_copies(make_work_context(sharded.job, sharded.set, sharded.rates, sharded.scale)));
    Context one = context({{"train.framework", "torchtitan"}, {"parallel.zero", "3"}}, 1);
    EXPECT_FALSE(fsdp2_unit_copies(make_work_context(one.job, one.set, one.rates, one.scale)));
    Context ddp = context({{"train.framework", "torchtitan"}}, 2);   // zero 0: replicated, no fully_shard
    EXPECT_FALSE(fsdp2_unit_copies(make_work_context(ddp.job, ddp.set, ddp.rates, ddp.scale)));
    Context fsdp1 = context({{"parallel.zero", "3"}}, 2);   // generic: FSDP1's flat parameters
    EXPECT_FALSE(fsdp2_unit_copies(make_work_context(fsdp1.job, fsdp1.set, fsdp1.rates, fsdp1.scale)));
}

TEST(Fsdp2Copies, EachGatherCopiesOutAndEachSyncCopiesTheGradientsIntoTheReduceDtype) {
    Context x = context({{"train.framework", "torchtitan"}, {"parallel.zero", "3"}, {"train.weights", "mixed"}}, 2);
    const WorkContext c = make_work_context(x.job, x.set, x.rates, x.scale);
    ASSERT_DOUBLE_EQ(x.set.bytes.weight_compute, 2);   // bf16 gathered parameters and gradients
    ASSERT_DOUBLE_EQ(x.set.reduce_bytes, 4);           // MixedPrecisionPolicy reduce_dtype fp32
    Work fwd, bwd;
    add_fsdp2_unit_copies(fwd, bwd, c, 1000, true);
    // Forward: copy-out of 1000 bf16 parameters, read + write = 4000 B. Backward: the copy-out again (resharded
    // after the forward) and the copy-in, 1000 x (2 + 4) = 6000 B.
    EXPECT_DOUBLE_EQ(fwd.memory_s, 4000 / x.rates.memory_Bps);
    EXPECT_DOUBLE_EQ(bwd.memory_s, (4000 + 6000) / x.rates.memory_Bps);
    EXPECT_DOUBLE_EQ(bwd.kernels, 2);
    Work frozen_fwd, frozen_bwd;
    add_fsdp2_unit_copies(frozen_fwd, frozen_bwd, c, 1000, false);   // nothing to reduce-scatter
    EXPECT_DOUBLE_EQ(frozen_bwd.memory_s, 4000 / x.rates.memory_Bps);
}

TEST(Fsdp2Copies, UnderPipeliningTheUnitStaysGatheredAndSyncsOnceAStep) {
    // pp 2 with 4 micro-batches: gathered before the first forward only, reduced after the last backward.
    Context x = context({{"train.framework", "torchtitan"}, {"parallel.zero", "3"}, {"parallel.pp", "2"},
                         {"train.weights", "mixed"}, {"train.global_batch", "8"}}, 4);
    ASSERT_EQ(x.job.spec.grad_accumulation(), 4);
    const WorkContext c = make_work_context(x.job, x.set, x.rates, x.scale);
    Work fwd, bwd;
    add_fsdp2_unit_copies(fwd, bwd, c, 1000, true);
    EXPECT_DOUBLE_EQ(fwd.memory_s, 4000 / 4.0 / x.rates.memory_Bps);
    EXPECT_DOUBLE_EQ(bwd.memory_s, 6000 / 4.0 / x.rates.memory_Bps);
}

}  // namespace
}  // namespace ftb
