// stage_params and stage_activations count a run of equal blocks (same LayerSpec, same role) once. A stage must
// come out as the blocks counted one by one: tiny inline Llama with 5 blocks [A, A, B, A, A], where B has a wider
// FFN, under full training, freezing (the trained part starts inside a run) and QLoRA.
#include <gtest/gtest.h>

#include <algorithm>

#include "memory/stage_activations.hpp"
#include "memory/stage_params.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job five_blocks(std::vector<std::pair<std::string, std::string>> sets) {
    sets.push_back({"model.num_hidden_layers", "5"});
    Job job = tiny_job(sets);
    job.model.layers[2].ffn_intermediate *= 2;
    return job;
}

StageSplit only_block(int64_t li) { return StageSplit{li, li + 1, false, false}; }

// The blocks of `job` added one at a time, each from a stage holding that block alone.
StageParams blocks_one_by_one(const Job& job, const TrainingSetup& set) {
    StageParams sum;
    for (int64_t li = 0; li < int64_t(job.model.num_layers()); ++li) {
        const StageParams b = stage_params(job, set, only_block(li));
        sum.trainable += b.trainable, sum.frozen += b.frozen, sum.quantised += b.quantised;
        sum.linear_weights += b.linear_weights, sum.blocks += b.blocks, sum.adafactor_state += b.adafactor_state;
        if (b.largest_layer > sum.largest_layer) sum.largest_layer_quantised = b.largest_layer_quantised;
        sum.largest_layer = std::max(sum.largest_layer, b.largest_layer);
        sum.largest_quantised = std::max(sum.largest_quantised, b.largest_quantised);
        sum.largest_trainable_matrix = std::max(sum.largest_trainable_matrix, b.largest_trainable_matrix);
    }
    return sum;
}

void expect_blocks_counted_one_by_one(const Job& job) {
    const TrainingSetup set = derive_setup(job);
    const StageSplit blocks_only{0, int64_t(job.model.num_layers()), false, false};
    const StageParams whole = stage_params(job, set, blocks_only);
    const StageParams sum = blocks_one_by_one(job, set);
    EXPECT_DOUBLE_EQ(whole.trainable, sum.trainable);
    EXPECT_DOUBLE_EQ(whole.frozen, sum.frozen);
    EXPECT_DOUBLE_EQ(whole.quantised, sum.quantised);
    EXPECT_DOUBLE_EQ(whole.linear_weights, sum.linear_weights);
    EXPECT_DOUBLE_EQ(whole.blocks, sum.blocks);
    EXPECT_DOUBLE_EQ(whole.largest_layer, sum.largest_layer);
    EXPECT_DOUBLE_EQ(whole.largest_layer_quantised, sum.largest_layer_quantised);
    EXPECT_DOUBLE_EQ(whole.largest_quantised, sum.largest_quantised);
    EXPECT_DOUBLE_EQ(whole.largest_trainable_matrix, sum.largest_trainable_matrix);

    const StageActivations acts = stage_activations(job, set, blocks_only, 0);
    ASSERT_EQ(acts.per_block.size(), 5u);
    for (int64_t li = 0; li < 5; ++li)
        EXPECT_DOUBLE_EQ(acts.per_block[size_t(li)], stage_activations(job, set, only_block(li), 0).per_block[0])
            << "block " << li;
}

TEST(MemoryEqualBlockRuns, FullTrainingCountsEveryBlock) {
    const Job job = five_blocks({});
    expect_blocks_counted_one_by_one(job);
    // The wide block is the largest, and its run boundary shows in the total: 4 narrow + 1 wide.
    const TrainingSetup set = derive_setup(job);
    const StageParams whole = stage_params(job, set, StageSplit{0, 5, false, false});
    EXPECT_DOUBLE_EQ(whole.blocks, 4 * kTinyBlockParams + (kTinyBlockParams + 3 * 64 * 128));
}

TEST(MemoryEqualBlockRuns, FreezingInsideARunSplitsIt) {
    // The last 3 blocks train: blocks 0 and 1 are equal but frozen, block 3 equals them and trains.
    expect_blocks_counted_one_by_one(five_blocks({{"train.method", "freeze"}, {"train.freeze.trainable_layers", "3"}}));
}

TEST(MemoryEqualBlockRuns, QloraAndPerOpRecomputeCountEveryBlock) {
    expect_blocks_counted_one_by_one(five_blocks({{"train.method", "qlora"}, {"train.activation_checkpointing", "op"}}));
    expect_blocks_counted_one_by_one(five_blocks({{"train.activation_checkpointing", "selective"}}));
}

}  // namespace
}  // namespace ftb
