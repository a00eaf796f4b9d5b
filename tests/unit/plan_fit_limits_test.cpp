// "What would make it fit" and the limits, end to end through `ftbound plan`: every change offered for a job
// that does not fit is re-planned through the CLI with its --set list and must fit; the longest sequence the
// plan reports fits and one token more does not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ftbound/memory.hpp"
#include "ftbound/plan.hpp"
#include "plan_test_util.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;


std::vector<std::string> with_sets(const std::string& job, const Json& sets) {
    std::vector<std::string> args{job};
    for (const Json& s : sets) {
        args.push_back("--set");
        args.push_back(s.get<std::string>());
    }
    return args;
}

TEST(PlanFit, Unsharded70BDoesNotFitAndEveryFixDoes) {
    // Llama 3.1 70B, full fine-tune, AdamW under torch.amp, no sharding on 8x H100 80 GB: ~16 B/param of state
    // alone is ~1.1 TB per GPU. The plan must say so (exit 0, fits false) and offer changes that fit.
    const std::string job = example("llama3.1-70b-full-8xh100-unsharded.yaml");
    const Json j = plan_json({job});
    ASSERT_FALSE(j.empty());
    EXPECT_FALSE(j["memory"]["fits"].get<bool>());
    EXPECT_GT(j["memory"]["device_used_bytes"].get<double>(), 70e9 * 16 / 1.0);   // at least the per-param state
    EXPECT_EQ(j["limits"]["max_micro_batch"].get<int64_t>(), 0);
    ASSERT_TRUE(j["fits_with"].is_array());
    ASSERT_FALSE(j["fits_with"].empty());
    for (const Json& fix : j["fits_with"]) {
        SCOPED_TRACE(fix.dump());
        ASSERT_TRUE(fix["set"].is_array());
        ASSERT_FALSE(fix["set"].empty());
        EXPECT_TRUE(fix["fits"].get<bool>());
        const Json re = plan_json(with_sets(job, fix["set"]));
        ASSERT_FALSE(re.empty());
        EXPECT_TRUE(re["memory"]["fits"].get<bool>());
        EXPECT_TRUE(re["memory"]["host_fits"].get<bool>()) << "fix needs more host RAM than the server has";
        EXPECT_NEAR(re["memory"]["device_used_bytes"].get<double>(), fix["device_used_bytes"].get<double>(),
                    1e-9 * fix["device_used_bytes"].get<double>())
            << "the fix as re-planned through --set differs from the fix as planned";
        EXPECT_TRUE(re["fits_with"].empty());
    }
}

TEST(PlanFit, FittingJobOffersNoFixes) {
    const Json j = plan_json({example("llama3.1-8b-lora-r760xa.yaml")});
    EXPECT_TRUE(j["memory"]["fits"].get<bool>());
    EXPECT_TRUE(j["fits_with"].empty());
}

TEST(PlanLimits, LoraOn24GBCardLongestSequence) {
    // Llama 3.1 8B LoRA (bf16 base, full recompute, chunked loss) on one RTX 4090: the plan's longest sequence
    // fits and one token more does not (the search steps by cp = 1).
    const std::string job = example("llama3.1-8b-lora-rtx4090.yaml");
    const Json j = plan_json({job});
    const int64_t seq = j["limits"]["max_seq_len"].get<int64_t>();
    ASSERT_GT(seq, 2048) << "the job at seq_len 2048 fits, so the limit must be above it";
    const Json at = plan_json({job, "--set", "train.seq_len=" + std::to_string(seq)});
    EXPECT_GE(at["memory"]["margin_bytes"].get<double>(), 0) << "seq_len " << seq;
    EXPECT_TRUE(at["memory"]["fits"].get<bool>()) << "seq_len " << seq;
    EXPECT_EQ(at["memory"]["verdict"], "tight") << "at the limit the capacity lies inside the band";
    EXPECT_EQ(at["limits"]["max_seq_len"].get<int64_t>(), seq);
    const Json over = plan_json({job, "--set", "train.seq_len=" + std::to_string(seq + 1)});
    EXPECT_LT(over["memory"]["margin_bytes"].get<double>(), 0) << "seq_len " << seq + 1;
    EXPECT_EQ(over["memory"]["verdict"], "tight") << "one token over is still inside the band";
    EXPECT_EQ(over["limits"]["max_seq_len"].get<int64_t>(), seq);
    // At that length a larger micro-batch cannot fit either.
    EXPECT_EQ(at["limits"]["max_micro_batch"].get<int64_t>(), 1);
}

TEST(PlanLimits, LoraOn24GBCardLargestMicroBatch) {
    const Job job = load_job(example("llama3.1-8b-lora-rtx4090.yaml"));
    const Plan plan = make_plan(job, PlanOptions{true, false, false, false});
    ASSERT_GT(plan.max_micro_batch, 0);
    Job trial = job;
    trial.spec.train.micro_batch = plan.max_micro_batch;
    EXPECT_TRUE(within_capacity(plan_memory(trial)));
    trial.spec.train.micro_batch = plan.max_micro_batch + 1;
    EXPECT_FALSE(within_capacity(plan_memory(trial)));
}

TEST(PlanLimits, ContextParallelStepsBySequenceShards) {
    // With cp = 2 lengths come in multiples of 2: the limit is even, limit + 2 does not fit.
    Job job = load_job(plan_data("lora-8b-8xh100-few-hours.yaml"), {"parallel.cp=2", "train.global_batch=32"});
    const int64_t seq = max_seq_len(job);
    ASSERT_GT(seq, 0);
    EXPECT_EQ(seq % 2, 0);
    job.spec.train.seq_len = seq;
    EXPECT_TRUE(within_capacity(plan_memory(job)));
    job.spec.train.seq_len = seq + 2;
    EXPECT_FALSE(within_capacity(plan_memory(job)));
}

}  // namespace
}  // namespace ftb
