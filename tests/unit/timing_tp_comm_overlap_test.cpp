// Transformer Engine userbuffers overlap of sequence-parallel collectives (timing/tp_comm_overlap.hpp): what stays
// exposed when an all-gather feeds a GEMM or a reduce-scatter follows one, both split into `chunks` pieces.
#include <gtest/gtest.h>

#include "timing/tp_comm_overlap.hpp"

namespace ftb {
namespace {

TEST(TpCommOverlap, AllGatherHidesUnderThePreviousChunksGemm) {
    // 4 chunks: 3 remote chunks of 1 s each under GEMM chunks of 1 s: nothing waits.
    EXPECT_DOUBLE_EQ(overlapped_all_gather_exposed_s(3, 4, 4), 0);
    // Remote chunks of 2 s under GEMM chunks of 1 s: each of the 3 waits 1 s.
    EXPECT_DOUBLE_EQ(overlapped_all_gather_exposed_s(6, 4, 4), 3);
    // One rank: nothing to gather.
    EXPECT_DOUBLE_EQ(overlapped_all_gather_exposed_s(5, 1, 1), 0);
}

TEST(TpCommOverlap, ReduceScatterLeavesTheLastChunkExposed) {
    // 4 chunks of 1 s transfer behind GEMM chunks of 2 s: only the last chunk's 1 s is exposed.
    EXPECT_DOUBLE_EQ(overlapped_reduce_scatter_exposed_s(4, 8, 4), 1);
    // Chunks of 2 s behind GEMM chunks of 1 s: the last chunk's 2 s + 1 s for each of the other 3.
    EXPECT_DOUBLE_EQ(overlapped_reduce_scatter_exposed_s(8, 4, 4), 5);
}

}  // namespace
}  // namespace ftb
