// Interleaved 1F1B: the saved bytes a pipeline rank holds at once, counted chunk by chunk through Megatron-LM's
// schedule (schedules.py get_schedule_table / get_pp_rank_microbatches), worked by hand.
#include <gtest/gtest.h>

#include <vector>

#include "memory/stage_activations.hpp"

namespace ftb {
namespace {

TEST(MemoryInterleaved, EqualChunksGiveKorthikantisFirstStageFactor) {
    // pp 4, 2 chunks, 8 micro-batches, groups of 4: rank 0 runs (4-0-1)*2 + (2-1)*4 = 10 forwards, then one more
    // before its first backward: 11 chunks of 1 byte, i.e. 5.5 stage-sized micro-batches = 4 * (1 + 3/8).
    const std::vector<double> chunks{1, 1};
    EXPECT_DOUBLE_EQ(interleaved_resident_bytes(chunks, 4, 0, 8), 11);
    // The last rank: (2-1)*4 = 4 warm-up forwards + 1 (not 1F1B's single micro-batch).
    EXPECT_DOUBLE_EQ(interleaved_resident_bytes(chunks, 4, 3, 8), 5);
    // Rank 1: 4 + 4 + 1 = 9.
    EXPECT_DOUBLE_EQ(interleaved_resident_bytes(chunks, 4, 1, 8), 9);
}

TEST(MemoryInterleaved, AnEmbeddingOnlyFirstChunkHoldsAlmostNothing) {
    // Rank 0 whose chunk 0 holds only the embedding (0 bytes) and chunk 1 one block (1 byte). The table runs
    // mb0-3 on chunk 0, mb0-3 on chunk 1, mb4-7 on chunk 0, ...: the 10 warm-up forwards are 6 on chunk 0 and 4 on
    // chunk 1; the 11th is chunk 0 again. Then backward frees chunk 1 while forward adds chunk 0 (mb 7), and
    // forward reaches chunk 1's mb 4 only after backward freed one: at most 4 blocks live.
    EXPECT_DOUBLE_EQ(interleaved_resident_bytes({0, 1}, 4, 0, 8), 4);
}

TEST(MemoryInterleaved, FewMicroBatchesRunAllForwardsFirst) {
    // 2 micro-batches on pp 4 with 2 chunks: 10 warm-up forwards exceed the 4 in the step, so every forward runs
    // before the first backward (get_pp_rank_microbatches: are_all_microbatches_in_warmup).
    EXPECT_DOUBLE_EQ(interleaved_resident_bytes({1, 3}, 4, 0, 2), 2 * 1 + 2 * 3);
}

TEST(MemoryInterleaved, InFlightMicroBatchesInStageUnits) {
    ParallelSpec par;
    par.pp = 16;
    par.pp_schedule = PipelineSchedule::interleaved;
    par.virtual_stages = 8;
    // Llama 3 405B (32 micro-batches): rank 0 holds 30 + 112 + 1 = 143 chunks, 17.875 stages; rank 1 141.
    EXPECT_DOUBLE_EQ(in_flight_micro_batches(par, 32, 0), 143.0 / 8);
    EXPECT_DOUBLE_EQ(in_flight_micro_batches(par, 32, 1), 141.0 / 8);
    // 16 micro-batches: 128 chunks in the step, fewer than rank 1's 28 + 112 warm-up: all of them.
    EXPECT_DOUBLE_EQ(in_flight_micro_batches(par, 16, 1), 16);
}

}  // namespace
}  // namespace ftb
