// data.max_sample_tokens: unpacked batches are padded to their longest sample (torchtune padded_collate_sft,
// Hugging Face DataCollatorWithPadding), so the memory peak is the plan of a micro-batch at min(seq_len, longest
// sample); step time keeps the average length. The tiny inline Llama of plan_test_util.hpp.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"
#include "timing/work_builder.hpp"

namespace ftb {
namespace {

using namespace plan_test;

// seq_len 32, micro-batch 2, padded per batch; `extra` adds keys.
Job unpacked(const std::string& max_sample, std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> sets = {
        {"train.seq_len", "32"}, {"train.micro_batch", "2"}, {"train.global_batch", "2"},
        {"train.packing", "false"}, {"train.avg_seq_len", "6"}};
    if (!max_sample.empty()) sets.push_back({"data.max_sample_tokens", max_sample});
    sets.insert(sets.end(), extra.begin(), extra.end());
    return tiny_job(sets);
}

Job packed(const std::string& seq_len, std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> sets = {
        {"train.seq_len", seq_len}, {"train.micro_batch", "2"}, {"train.global_batch", "2"}};
    sets.insert(sets.end(), extra.begin(), extra.end());
    return tiny_job(sets);
}

TEST(MemoryPaddedLength, PeakIsTheMicroBatchPaddedToTheLongestSample) {
    // Longest sample 10 of seq_len 32: every tensor of the walk is the packed plan's at seq_len 10, 2 x 10 = 20
    // tokens per micro-batch; padded to seq_len (no longest sample given) it is the plan at 32 tokens each.
    const MemoryResult at_longest = plan_memory(unpacked("10"));
    EXPECT_DOUBLE_EQ(at_longest.tokens_per_micro_batch, 20);
    EXPECT_DOUBLE_EQ(at_longest.allocated_peak_bytes, plan_memory(packed("10")).allocated_peak_bytes);
    EXPECT_DOUBLE_EQ(at_longest.breakdown.activations_bytes, plan_memory(packed("10")).breakdown.activations_bytes);
    const MemoryResult unknown = plan_memory(unpacked(""));
    EXPECT_DOUBLE_EQ(unknown.tokens_per_micro_batch, 64);
    EXPECT_DOUBLE_EQ(unknown.allocated_peak_bytes, plan_memory(packed("32")).allocated_peak_bytes);
    EXPECT_LT(at_longest.allocated_peak_bytes, unknown.allocated_peak_bytes);
}

TEST(MemoryPaddedLength, EagerScoresUseThePaddedLengthToo) {
    // Eager attention keeps micro_batch x heads x s x s scores: s is the padded length, not seq_len.
    const std::vector<std::pair<std::string, std::string>> eager = {{"train.attention", "eager"}};
    EXPECT_DOUBLE_EQ(plan_memory(unpacked("12", eager)).allocated_peak_bytes,
                     plan_memory(packed("12", eager)).allocated_peak_bytes);
}

TEST(MemoryPaddedLength, IgnoredWhenPackedOrLongerThanSeqLen) {
    // Packed batches fill seq_len whatever the samples; a sample beyond seq_len is truncated to it.
    const double packed32 = plan_memory(packed("32")).allocated_peak_bytes;
    EXPECT_DOUBLE_EQ(plan_memory(packed("32", {{"data.max_sample_tokens", "10"}})).allocated_peak_bytes, packed32);
    EXPECT_DOUBLE_EQ(plan_memory(unpacked("500")).allocated_peak_bytes, packed32);
}

TEST(MemoryPaddedLength, PaddedLengthRoundsUpToContextParallelShares) {
    JobSpec js;
    js.train.seq_len = 32;
    js.train.packing = false;
    js.data.max_sample_tokens = 10;
    EXPECT_EQ(js.padded_seq_len(), 10);
    js.parallel.cp = 4;   // each of 4 ranks takes an equal part: 10 -> 12
    EXPECT_EQ(js.padded_seq_len(), 12);
    js.data.max_sample_tokens = 31;   // 32, not beyond seq_len
    EXPECT_EQ(js.padded_seq_len(), 32);
    js.train.packing = true;
    js.data.max_sample_tokens = 10;
    EXPECT_EQ(js.padded_seq_len(), 32);
}

TEST(MemoryPaddedLength, StepTimeKeepsTheAverageCappedAtTheLongestSample) {
    // Two sequences of average 6: the expected longer of two is 2 x 6 x 2 / 3 = 8 tokens; a longest sample of 7
    // caps it there, one of 10 leaves it. Real tokens stay avg_seq_len.
    EXPECT_DOUBLE_EQ(micro_batch_shape(unpacked("")).compute_seq, 8);
    EXPECT_DOUBLE_EQ(micro_batch_shape(unpacked("10")).compute_seq, 8);
    const MicroBatchShape capped = micro_batch_shape(unpacked("7"));
    EXPECT_DOUBLE_EQ(capped.compute_seq, 7);
    EXPECT_DOUBLE_EQ(capped.real_tokens_per_seq, 6);
}

TEST(MemoryPaddedLength, MaxSeqLenLimitIsTheLongestPaddedLengthThatFits) {
    // The limit bisects the padded length itself: the longest sample does not cap it.
    EXPECT_EQ(max_seq_len(unpacked("10")), max_seq_len(unpacked("")));
}

TEST(MemoryPaddedLength, ExpectedPaddedLengthIsTheLongestOfTheMicroBatchCapped) {
    // One sample runs on its own length; two: 2*6*2/3 = 8; capped at the longest sample; packed: seq_len.
    EXPECT_DOUBLE_EQ(tiny_job({{"train.seq_len", "32"}, {"train.micro_batch", "1"}, {"train.global_batch", "1"},
                               {"train.packing", "false"}, {"train.avg_seq_len", "6"}})
                         .spec.expected_padded_seq_len(),
                     6);
    EXPECT_DOUBLE_EQ(unpacked("").spec.expected_padded_seq_len(), 8);
    EXPECT_DOUBLE_EQ(unpacked("7").spec.expected_padded_seq_len(), 7);
    EXPECT_DOUBLE_EQ(packed("32").spec.expected_padded_seq_len(), 32);
}

TEST(MemoryPaddedLength, TypicalStepIsTheWalkAtTheExpectedPaddedLength) {
    // Two sequences of average 6 pad to 8 on a typical step: the walk of every sequence at 8 tokens, below the
    // longest batch the job allows (seq_len 32, or the longest sample 10).
    const Job job = unpacked("");
    const std::optional<Job> typical = typical_step_job(job);
    ASSERT_TRUE(typical.has_value());
    EXPECT_EQ(typical->spec.padded_seq_len(), 8);
    const MemoryResult worst = plan_memory(job);
    const double typical_peak = typical_step_allocated_peak_bytes(job, worst);
    EXPECT_DOUBLE_EQ(typical_peak, plan_memory(packed("8")).allocated_peak_bytes);
    // Where the activations decide the peak (2 x 2048 tokens allowed, 2 x 86 typical), the typical step is lower.
    const Job long_allowed = tiny_job({{"train.seq_len", "2048"}, {"train.micro_batch", "2"},
                                       {"train.global_batch", "2"}, {"train.packing", "false"},
                                       {"train.avg_seq_len", "64"}});
    const MemoryResult long_worst = plan_memory(long_allowed);
    EXPECT_LT(typical_step_allocated_peak_bytes(long_allowed, long_worst), 0.5 * long_worst.allocated_peak_bytes);
    // A longest sample of 7 is below the typical 8: every batch is the worst one.
    EXPECT_FALSE(typical_step_job(unpacked("7")).has_value());
}

TEST(MemoryPaddedLength, TypicalStepOfPackedDataIsTheWorstStep) {
    const Job job = packed("32");
    EXPECT_FALSE(typical_step_job(job).has_value());
    const MemoryResult worst = plan_memory(job);
    EXPECT_DOUBLE_EQ(typical_step_allocated_peak_bytes(job, worst), worst.allocated_peak_bytes);
}

}  // namespace
}  // namespace ftb
