// Recommendations (issue "Operations" #1): for jobs with clear bottlenecks, every recommendation is re-planned
// here through the CLI with its own --set list: it must fit, reproduce the step time the plan promised, and
// really be faster per real token (per GPU where it moves the job to another GPU count).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;


struct Expectation {
    std::string job;             // example or test job
    std::string bottleneck;      // what the plan must name
    std::string expected_set;    // one recommendation must carry this assignment
};

void check_recommendations(const Expectation& e) {
    SCOPED_TRACE(e.job);
    const Json base = plan_json({e.job});
    ASSERT_FALSE(base.empty());
    ASSERT_TRUE(base["memory"]["fits"].get<bool>());
    if (!e.bottleneck.empty()) {
        EXPECT_EQ(base["bottleneck"]["resource"], e.bottleneck);
    }
    const Json& recs = base["recommendations"];
    ASSERT_TRUE(recs.is_array());
    ASSERT_FALSE(recs.empty()) << "a job with a clear bottleneck gets at least one recommendation";
    bool found_expected = e.expected_set.empty();
    double previous_speedup = 1e300;
    for (const Json& rec : recs) {
        SCOPED_TRACE(rec.dump());
        EXPECT_TRUE(in_vocabulary(rec["resource"].get<std::string>()));
        const double speedup = rec["speedup"].get<double>();
        EXPECT_GT(speedup, 1);
        EXPECT_LE(speedup, previous_speedup) << "recommendations are ranked by speed-up";
        previous_speedup = speedup;
        ASSERT_FALSE(rec["set"].empty());
        std::vector<std::string> args{e.job};
        for (const Json& s : rec["set"]) {
            args.push_back("--set");
            args.push_back(s.get<std::string>());
            if (s == e.expected_set) found_expected = true;
        }
        const Json re = plan_json(args);
        ASSERT_FALSE(re.empty());
        EXPECT_TRUE(re["memory"]["fits"].get<bool>());
        EXPECT_TRUE(re["memory"]["host_fits"].get<bool>());
        EXPECT_NEAR(re["memory"]["device_used_bytes"].get<double>(), rec["device_used_bytes"].get<double>(),
                    1e-9 * rec["device_used_bytes"].get<double>())
            << "memory re-planned through --set differs from the recommendation's";
        EXPECT_NEAR(re["step"]["seconds"].get<double>(), rec["step_seconds"].get<double>(),
                    1e-9 * rec["step_seconds"].get<double>())
            << "step re-planned through --set differs from the recommendation's";
        // Faster per real token: per GPU when the change moves the job to another GPU count.
        const bool same_gpus = re["gpus"] == base["gpus"];
        const char* rate = same_gpus ? "tokens_per_second" : "tokens_per_second_per_gpu";
        const double gain = re["throughput"][rate].get<double>() / base["throughput"][rate].get<double>();
        EXPECT_GT(gain, 1) << rate;
        EXPECT_NEAR(gain, speedup, 1e-9 * speedup);
        // With the same GPUs and the same global batch, the optimizer step itself is shorter.
        if (same_gpus && re["throughput"]["tokens_per_step"] == base["throughput"]["tokens_per_step"]) {
            EXPECT_LT(re["step"]["seconds"].get<double>(), base["step"]["seconds"].get<double>());
        }
    }
    EXPECT_TRUE(found_expected) << "no recommendation sets " << e.expected_set << ": " << recs.dump();
}

TEST(RecommendReplan, NetworkBoundFsdpOverSlowEthernet) {
    // ZeRO-3 over 2 nodes on 25 GbE: the fabric bounds the step; a faster fabric must be among the changes.
    check_recommendations({plan_data("zero3-8b-2-nodes-25g.yaml"), "network", "hardware.inter_node=eth-100g"});
}

TEST(RecommendReplan, PipelineBubble) {
    // 4 stages, 4 micro-batches per step: the schedule's idle time is a large share; interleaving helps.
    check_recommendations({plan_data("pipeline-13b-bubble.yaml"), "", "parallel.pp_schedule=interleaved"});
}

TEST(RecommendReplan, OffloadedOptimizer) {
    // ZeRO-Offload on 4x H100 PCIe: the CPU optimizer step is the largest single phase; keeping it on the GPU
    // fits and is faster.
    check_recommendations({plan_data("offload-8b-4xh100-pcie.yaml"), "", "offload.optimizer=none"});
}

TEST(RecommendReplan, RecomputeOnCpuServer) {
    check_recommendations({plan_data("lora-8b-cpu-server.yaml"), "", "train.activation_checkpointing=none"});
}

TEST(RecommendReplan, PcieServerToNvlinkServer) {
    // LoRA on 4x H100 PCIe: an NVSwitch server with the same GPU is offered, compared per GPU.
    check_recommendations({example("llama3.1-8b-lora-r760xa.yaml"), "compute", ""});
}

TEST(RecommendReplan, NoRecommendationForAJobThatDoesNotFit) {
    const Json j = plan_json({example("llama3.1-70b-full-8xh100-unsharded.yaml")});
    EXPECT_FALSE(j["memory"]["fits"].get<bool>());
    EXPECT_TRUE(j["recommendations"].empty());
}

}  // namespace
}  // namespace ftb

namespace ftb {
namespace {

// Moving H100 PCIe cards (TP over PCIe) to an NVSwitch server also swaps the GPU for its SXM sibling: two gains.
// The recommendation names both, and together they make its speed-up.
TEST(RecommendReplan, AServerWithAnotherGpuNamesTheGpuAndTheLinksGainsApart) {
    const Json base = plan_json({std::string(ftb_test::test_data()) + "/bottlenecks/tp4_pcie_h100.yaml"});
    bool found = false;
    for (const Json& rec : base["recommendations"]) {
        const std::string what = rec["what"].get<std::string>();
        if (what.find("NVLink/NVSwitch") == std::string::npos) continue;
        found = true;
        SCOPED_TRACE(what);
        const size_t at = what.find("also a different GPU (h100-sxm instead of h100-pcie)");
        ASSERT_NE(at, std::string::npos);
        const size_t x1 = what.find(" x", at), x2 = what.find(" x", x1 + 2);
        ASSERT_NE(x2, std::string::npos);
        const double gpu_alone = std::stod(what.substr(x1 + 2)), links = std::stod(what.substr(x2 + 2));
        EXPECT_GT(gpu_alone, 1);   // the SXM part runs at a higher power limit and memory bandwidth
        EXPECT_NEAR(gpu_alone * links, rec["speedup"].get<double>(), 0.01 * rec["speedup"].get<double>());
    }
    EXPECT_TRUE(found) << base["recommendations"].dump();
}

}  // namespace
}  // namespace ftb
