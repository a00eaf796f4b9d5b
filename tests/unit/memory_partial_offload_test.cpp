// Megatron-Core's cpu_offloading_num_layers (offload.activation_layers): only the first N blocks of a stage send
// their saved tensors to host memory (Transformer Engine cpu_offload.py: tensor_push offloads while
// `current_group < num_offload_group`), two offloaded blocks in flight on the GPU. Tiny inline Llama, 2 blocks.
#include <gtest/gtest.h>

#include "memory/stage_activations.hpp"
#include "memory/stage_params.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "ftbound/error.hpp"

namespace ftb {
namespace {

using namespace plan_test;

StageActivations activations_of(const Job& job) {
    const TrainingSetup set = derive_setup(job);
    return stage_activations(job, set, stage_split(job.model.num_layers(), 1, 0), 0);
}

TEST(MemoryPartialOffload, FirstBlockOnTheHostSecondOnTheGpu) {
    const StageActivations none = activations_of(tiny_job({{"train.activation_checkpointing", "none"}}));
    const StageActivations one = activations_of(tiny_job({{"train.activation_checkpointing", "none"},
                                                          {"offload.activations", "cpu"},
                                                          {"offload.activation_layers", "1"}}));
    ASSERT_EQ(none.per_block.size(), 2u);
    // Host: block 0's saved bytes. GPU: everything else, plus the sent block kept in flight (min(sent, 2 x sent)).
    EXPECT_DOUBLE_EQ(one.host, none.per_block[0]);
    EXPECT_DOUBLE_EQ(one.resident, none.resident);
    EXPECT_FALSE(one.offloaded);
    // The traffic the step time moves over the host link: block 0 per micro-batch, there and back.
    EXPECT_DOUBLE_EQ(plan_memory(tiny_job({{"train.activation_checkpointing", "none"}, {"offload.activations", "cpu"},
                                           {"offload.activation_layers", "1"}}))
                         .offloaded_activation_bytes,
                     none.per_block[0]);
    EXPECT_DOUBLE_EQ(plan_memory(tiny_job({{"train.activation_checkpointing", "none"}})).offloaded_activation_bytes, 0);
}

TEST(MemoryPartialOffload, NeedsCpuOffloadAndAtMostTheStagesBlocks) {
    EXPECT_THROW(tiny_job({{"offload.activation_layers", "1"}}), InputError);
    EXPECT_THROW(tiny_job({{"offload.activations", "cpu"}, {"offload.activation_layers", "3"}}), InputError);
}

}  // namespace
}  // namespace ftb
