// The operations part of `ftbound plan` end to end (issue "Operations"): reliability at Llama 3 scale and for an
// ordinary fine-tune, and under-sized power supplies reported as a weak point.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;


TEST(PlanOperations, Llama3ScaleInterruptions) {
    // Llama 3 405B on 16,384 H100s saw 419 unexpected interruptions in a 54-day snapshot (Llama 3 paper,
    // Table 5). Size data.tokens so that this job trains for 54 days at its predicted throughput; the expected
    // interruptions then come from the default (Llama 3) failure rate over the wall time, which adds checkpoint
    // and lost-work overhead on top: a little above 419.
    const std::string job = plan_data("llama3-405b-16k-gpus.yaml");
    const Json first = plan_json({job});
    ASSERT_TRUE(first.contains("gpus"));
    EXPECT_EQ(first["gpus"].get<int>(), 16384);
    const double tokens_per_second = first["throughput"]["tokens_per_second"].get<double>();
    ASSERT_GT(tokens_per_second, 0);
    const double tokens = tokens_per_second * 54 * 86400;
    const Json j = plan_json({job, "--set", "data.tokens=" + std::to_string(tokens)});
    ASSERT_TRUE(j["time_to_train_seconds"].is_number());
    EXPECT_NEAR(j["time_to_train_seconds"].get<double>() / 86400, 54, 0.01);
    const Json& rel = j["reliability"];
    const double interruptions = rel["expected_interruptions"].get<double>();
    EXPECT_GE(interruptions, 400);
    EXPECT_LE(interruptions, 470);
    // Job MTBF = 54 days / 419 = 11,135 s; with seconds-long checkpoints the Young/Daly interval is minutes.
    EXPECT_NEAR(rel["job_mtbf_seconds"].get<double>(), 54.0 * 86400 / 419, 1);
    const double interval = rel["checkpoint_interval_seconds"].get<double>();
    EXPECT_GE(interval, 60) << "checkpoint interval below a minute";
    EXPECT_LE(interval, 3600) << "checkpoint interval above an hour";
    EXPECT_GT(rel["goodput"].get<double>(), 0.8);
    EXPECT_LT(rel["goodput"].get<double>(), 1.0);
    // The 5.67e12-byte training state into Tectonic's 2 TB/s: 2.8 s, not a per-node sum over 2,048 nodes.
    EXPECT_NEAR(rel["checkpoint_write_seconds"].get<double>(), 405e9 * 14 / 2e12, 0.05 * 405e9 * 14 / 2e12);
    EXPECT_EQ(rel["checkpoint_bound_by"], "shared_storage");
}

TEST(PlanOperations, Llama3ScaleOnOneParallelFileSystemTakesMinutes) {
    // The default shared storage for a multi-node job (one parallel file system appliance, 80 GB/s): ~71 s.
    const Json j = plan_json({plan_data("llama3-405b-16k-gpus.yaml"), "--set", "ops.checkpoint_storage=parallel-fs"});
    const double write = j["reliability"]["checkpoint_write_seconds"].get<double>();
    EXPECT_GT(write, 30);
    EXPECT_LT(write, 30 * 60);
    EXPECT_EQ(j["storage"]["checkpoint"]["tier"], "parallel-fs");
    EXPECT_GE(j["reliability"]["checkpoint_interval_seconds"].get<double>(), write);
}

TEST(PlanOperations, SanityRulesHoldOnAPlan) {
    // 1,000 tokens are far less than one step (64 x 4096): the job still takes one whole step, and the checkpoint
    // interval is at least one step and at least one write.
    const Json j = plan_json({example("llama3.1-8b-lora-r760xa.yaml"), "--set", "data.tokens=1000", "--set", "data.epochs=1"});
    const double step = j["step"]["seconds"].get<double>();
    EXPECT_DOUBLE_EQ(j["time_to_train_seconds"].get<double>(), step);
    const Json& rel = j["reliability"];
    EXPECT_GE(rel["checkpoint_interval_seconds"].get<double>(), step * (1 - 1e-12));
    EXPECT_GE(rel["checkpoint_interval_seconds"].get<double>(), rel["checkpoint_write_seconds"].get<double>());
    // One node: its own NVMe array (data/systems: 8 drives x 3.8 GB/s = 30.4 GB/s write, each drive's x4 link
    // faster than the drive), restored at its read rate.
    EXPECT_EQ(j["storage"]["checkpoint"]["tier"], "local-nvme");
    EXPECT_EQ(j["storage"]["checkpoint"]["write_bound_by"], "storage");
    EXPECT_NEAR(j["storage"]["checkpoint"]["write_GBps_per_node"].get<double>(), 30.4, 1e-9);
    EXPECT_NEAR(rel["checkpoint_write_seconds"].get<double>(), rel["checkpoint_bytes"].get<double>() / 30.4e9, 1e-9);
}

TEST(PlanOperations, SmallLoraJobAlmostNeverInterrupted) {
    // 8 GPUs for about two hours: 8 x 2 h x 1.97e-5 failures/GPU-hour ~ 3e-4.
    const Json j = plan_json({plan_data("lora-8b-8xh100-few-hours.yaml")});
    ASSERT_TRUE(j["time_to_train_seconds"].is_number());
    const double hours = j["time_to_train_seconds"].get<double>() / 3600;
    EXPECT_GT(hours, 0.5);
    EXPECT_LT(hours, 24);
    EXPECT_LT(j["reliability"]["expected_interruptions"].get<double>(), 0.01);
    EXPECT_GT(j["reliability"]["expected_interruptions"].get<double>(), 0);
    EXPECT_GT(j["reliability"]["goodput"].get<double>(), 0.99);
}

TEST(PlanOperations, InterruptionsScaleWithGpuHours) {
    // Same job on twice the nodes: GPU count doubles, the job roughly halves; the failure rate is per GPU-hour,
    // so expected interruptions stay within the speed-up's deviation from linear.
    const Json one = plan_json({plan_data("zero3-8b-2-nodes-25g.yaml"), "--set", "hardware.inter_node=ib-ndr-400"});
    const Json two = plan_json({plan_data("zero3-8b-2-nodes-25g.yaml"), "--set", "hardware.inter_node=ib-ndr-400",
                                "--set", "hardware.nodes=4", "--set", "train.global_batch=32"});
    const double gpu_hours_one = one["gpus"].get<double>() * one["reliability"]["wall_seconds"].get<double>() / 3600;
    const double gpu_hours_two = two["gpus"].get<double>() * two["reliability"]["wall_seconds"].get<double>() / 3600;
    EXPECT_NEAR(one["reliability"]["expected_interruptions"].get<double>() / gpu_hours_one,
                two["reliability"]["expected_interruptions"].get<double>() / gpu_hours_two,
                1e-6 * one["reliability"]["expected_interruptions"].get<double>() / gpu_hours_one);
}

TEST(PlanOperations, UndersizedRedundantSuppliesAreAPowerWeakPoint) {
    // Fixture server: 4x H100 PCIe + 900 W base on 2 x 1,800 W supplies (1+1). At load the node draws ~2 kW:
    // both supplies carry it, one alone does not.
    const Json j = plan_json({plan_data("full-8b-on-small-psu.yaml")});
    const Json& pw = j["power"];
    EXPECT_DOUBLE_EQ(pw["psu_capacity_w"].get<double>(), 3600);
    EXPECT_DOUBLE_EQ(pw["psu_capacity_after_failure_w"].get<double>(), 1800);
    EXPECT_GT(pw["node_w"].get<double>(), 1800);
    EXPECT_LT(pw["node_w"].get<double>(), 3600);
    EXPECT_TRUE(pw["exceeds_redundant_capacity"].get<bool>());
    EXPECT_LT(pw["throttle_factor_after_psu_failure"].get<double>(), 1);
    EXPECT_GT(pw["throttle_factor_after_psu_failure"].get<double>(), 0);
    bool flagged = false;
    for (const Json& w : j["weak_points"])
        if (w["resource"] == "power") {
            flagged = true;
            EXPECT_GT(w["impact"].get<double>(), 1) << w.dump();
            EXPECT_NE(w["what"].get<std::string>().find("1800"), std::string::npos) << w.dump();
        }
    EXPECT_TRUE(flagged) << j["weak_points"].dump();
    // The text report says it too.
    const auto text = run_ftbound({"plan", plan_data("full-8b-on-small-psu.yaml")});
    ASSERT_EQ(text.exit_code, 0) << describe(text);
    EXPECT_NE(text.out.find("(power)"), std::string::npos) << text.out;
}

TEST(PlanOperations, CatalogServerWithHeadroomIsNotFlagged) {
    // The same job on the catalog R760xa (2 x 2,800 W, 1+1): one supply carries the node.
    const Json j = plan_json({plan_data("full-8b-on-small-psu.yaml"), "--set", "hardware.system=dell-poweredge-r760xa-4x-h100-pcie"});
    EXPECT_FALSE(j["power"]["exceeds_redundant_capacity"].get<bool>());
    for (const Json& w : j["weak_points"]) EXPECT_NE(w["resource"], "power") << w.dump();
}

}  // namespace
}  // namespace ftb
