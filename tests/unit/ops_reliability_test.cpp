// Reliability model (src/ops/reliability.*): Llama 3 failure rates, checkpoint size and write path,
// Young/Daly interval, interruptions and goodput. Expected numbers are worked out in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/reliability.hpp"

namespace ftb {
namespace {

constexpr double kDay = 86400;
constexpr double kLlama3GpuHours = 16384.0 * 54 * 24;  // 21,233,664

TEST(OpsReliability, Llama3ModelReproducesTable5) {
    const FailureModel m = llama3_failure_model();
    ASSERT_EQ(m.categories.size(), 18u);
    // Rate per category = count / (16,384 GPUs x 1,296 h); the counts sum to 419.
    EXPECT_NEAR(m.per_gpu_hour() * kLlama3GpuHours, 419, 1e-9);
    EXPECT_EQ(m.categories[0].name, "Faulty GPU");
    EXPECT_NEAR(m.categories[0].per_gpu_hour * kLlama3GpuHours, 148, 1e-9);
    EXPECT_NEAR(m.categories[1].per_gpu_hour * kLlama3GpuHours, 72, 1e-9);  // GPU HBM3
    double gpu = 0;
    for (const FailureCategory& c : m.categories)
        if (c.component == "GPU") gpu += c.per_gpu_hour * kLlama3GpuHours;
    EXPECT_NEAR(gpu, 148 + 72 + 19 + 17 + 6 + 6, 1e-9);
}

TEST(OpsReliability, OverrideKeepsTheCategoryMix) {
    const FailureModel base = llama3_failure_model();
    const FailureModel m = scaled_failure_model(base, 1e-4);
    EXPECT_NEAR(m.per_gpu_hour(), 1e-4, 1e-15);
    EXPECT_NEAR(m.categories[0].per_gpu_hour / m.per_gpu_hour(), 148.0 / 419, 1e-12);
}

TEST(OpsReliability, DalyIntervalMatchesThePapersExamples) {
    // Daly 2006, Figs. 3-5 (R = 10 min, delta = 5 min): M = 24 h -> 117 min, 6 h -> 57 min,
    // 15 min -> 9.1 min.
    EXPECT_NEAR(daly_interval_seconds(300, 24 * 3600) / 60, 117, 0.5);
    EXPECT_NEAR(daly_interval_seconds(300, 6 * 3600) / 60, 57, 0.5);
    EXPECT_NEAR(daly_interval_seconds(300, 900) / 60, 9.1, 0.05);
    // C >= 2M: checkpoint every M.
    EXPECT_DOUBLE_EQ(daly_interval_seconds(300, 100), 100);
    // Young: sqrt(2 x 60 x 3600) = 657.267
    EXPECT_NEAR(young_interval_seconds(60, 3600), 657.267, 1e-3);
}

TEST(OpsReliability, WallTimeFollowsDalysCompleteModel) {
    // M = 3600 s (made by 1 GPU at 1 failure/GPU-hour), C = 60, R = 120, Ts = 36000.
    // tau = sqrt(7200 x 60)(1 + sqrt(60/7200)/3 + (60/7200)/9) - 60 = 617.876 s
    // Tw = 3600 e^(120/3600) (e^(677.876/3600) - 1) x 36000 / 617.876 = 44932.2 s
    // interruptions = Tw / M = 12.481; goodput = 36000 / 44932.2 = 0.80121
    // checkpoints = 36000 / 617.876 = 58.264 -> overhead 3495.85 s
    FailureModel one{{{"all", "GPU", 1.0}}, "test"};
    const ReliabilityResult r = reliability(one, 1, 36000, 1e9, 60, 120, 0.01);
    EXPECT_DOUBLE_EQ(r.job_mtbf_seconds, 3600);
    EXPECT_NEAR(r.checkpoint_interval_seconds, 617.876, 1e-3);
    EXPECT_NEAR(r.wall_seconds, 44932.22, 0.05);
    EXPECT_NEAR(r.expected_interruptions, 12.4812, 1e-4);
    EXPECT_NEAR(r.goodput, 0.801207, 1e-6);
    EXPECT_NEAR(r.checkpoint_overhead_seconds, 3495.85, 0.01);
    EXPECT_NEAR(r.lost_seconds, 44932.22 - 36000, 0.05);
    EXPECT_NEAR(r.lost_cost, r.lost_seconds * 0.01, 1e-9);
    // Per failure: (8932.2 - 3495.85) / 12.481 = 435.6 s, close to tau/2 + R = 428.9 s.
    EXPECT_NEAR(r.lost_seconds_per_interruption, 435.57, 0.05);
    ASSERT_EQ(r.categories.size(), 1u);
    EXPECT_DOUBLE_EQ(r.categories[0].expected_interruptions, r.expected_interruptions);
}

TEST(OpsReliability, Llama3ScaleCalibration) {
    // 405B with bf16 weights + fp32 master + AdamW (2 + 4 + 8 = 14 B/param) = 5.67 TB, over 2,048
    // nodes of 8 H100: 2.77 GB per node. Path: PCIe 5 (55.4 GB/s achievable) per GPU, 1.2 GB/s per node
    // (NFS), and Tectonic's 2 TB/s sustained for the whole cluster (Llama 3 paper §3.3.1):
    // max(0.0062, 2.307, 2.835) = 2.835 s, bound by the shared storage.
    const double bytes = checkpoint_bytes({405e9, 0, 2, 4, 8});
    EXPECT_DOUBLE_EQ(bytes, 5.67e12);
    const CheckpointWrite w = checkpoint_write({bytes / 2048, 8, 63 * 0.88, 1.2, 2048, 2000});
    EXPECT_NEAR(w.seconds, 2.835, 1e-9);
    EXPECT_EQ(w.bound_by, "shared_storage");

    // MTBF = 1,296 h / 419 = 3.093 h = 11,135 s ("a failure every three hours").
    // Daly interval with C = 2.835 s: 249.4 s, about 4 minutes.
    // 54 days of useful training, restart 10 min: Tw = 58.3 days, 452 interruptions (419 in the first
    // 54 days plus the failures that strike the rework), goodput 0.926 (Meta reports > 90%).
    const ReliabilityResult r = reliability(llama3_failure_model(), 16384, 54 * kDay, bytes, w.seconds, 600, 0);
    EXPECT_NEAR(r.job_mtbf_seconds, 11135.08, 0.01);
    EXPECT_GT(r.checkpoint_interval_seconds, 60);
    EXPECT_LT(r.checkpoint_interval_seconds, 30 * 60);
    EXPECT_NEAR(r.checkpoint_interval_seconds, 249.38, 0.01);
    EXPECT_NEAR(54 * kDay / r.job_mtbf_seconds, 419, 1e-6);  // the calibration itself
    EXPECT_GT(r.expected_interruptions, 419);
    EXPECT_LT(r.expected_interruptions, 419 * 1.1);
    EXPECT_NEAR(r.expected_interruptions, 452.33, 0.01);
    EXPECT_GT(r.goodput, 0.90);
    EXPECT_NEAR(r.goodput, 0.926321, 1e-6);
    EXPECT_DOUBLE_EQ(r.lost_cost, 0);  // no price
    double sum = 0;
    for (const CategoryContribution& c : r.categories) sum += c.expected_interruptions;
    EXPECT_NEAR(sum, r.expected_interruptions, 1e-6);
    EXPECT_NEAR(r.categories[0].expected_interruptions / r.expected_interruptions, 148.0 / 419, 1e-12);
}

TEST(OpsReliability, SmallLoraRunHasNegligibleRisk) {
    // Llama 3 8B, LoRA r = 16 on all 7 linears of 32 blocks: 32 x 16 x (2 x 8192 + 2 x 5120 + 3 x 18432)
    // = 41,943,040 adapter params x 14 B = 587.2 MB (adapters + fp32 master + AdamW).
    const double bytes = checkpoint_bytes({41943040, 0, 2, 4, 8});
    EXPECT_DOUBLE_EQ(bytes, 587202560);
    // One node, 8 GPUs, local NVMe at 10 GB/s: 0.0587 s.
    const double c = checkpoint_write_seconds({bytes, 8, 63 * 0.88, 10, 1, 0});
    EXPECT_NEAR(c, 0.0587203, 1e-7);
    // 8 GPUs x 1.973e-5 / GPU-hour: MTBF 6,335 h; a 4-hour run sees 6.3e-4 interruptions.
    const double price_per_second = 8 * 2.5 / 3600;  // $2.50 per GPU-hour
    const ReliabilityResult r = reliability(llama3_failure_model(), 8, 4 * 3600, bytes, c, 300, price_per_second);
    EXPECT_NEAR(r.job_mtbf_seconds / 3600, 6334.6, 0.1);
    EXPECT_NEAR(r.expected_interruptions, 6.31e-4, 0.01e-4);
    EXPECT_GT(r.goodput, 0.999);
    EXPECT_LT(r.lost_cost, 0.10);  // cents
}

TEST(OpsReliability, NoFailuresCostsOneFinalCheckpoint) {
    FailureModel none{{{"all", "GPU", 0.0}}, "test"};
    const ReliabilityResult r = reliability(none, 64, 1000, 1e9, 10, 60, 1);
    EXPECT_TRUE(std::isinf(r.job_mtbf_seconds));
    EXPECT_DOUBLE_EQ(r.checkpoint_interval_seconds, 1000);
    EXPECT_DOUBLE_EQ(r.expected_interruptions, 0);
    EXPECT_DOUBLE_EQ(r.wall_seconds, 1010);
    EXPECT_DOUBLE_EQ(r.goodput, 1000.0 / 1010);
}

TEST(OpsReliability, FailuresFasterThanRestartsNeverProgress) {
    // 16,384 GPUs at 1 failure per GPU-hour: M = 0.22 s against a 10-minute restart.
    FailureModel bad{{{"all", "GPU", 1.0}}, "test"};
    const ReliabilityResult r = reliability(bad, 16384, kDay, 1e12, 30, 600, 100);
    EXPECT_FALSE(r.progresses);
    EXPECT_DOUBLE_EQ(r.goodput, 0);
    EXPECT_FALSE(std::isnan(r.expected_interruptions));
    EXPECT_FALSE(std::isnan(r.categories[0].lost_seconds));
}

TEST(OpsReliability, EmptyJobLosesNothing) {
    const ReliabilityResult r = reliability(llama3_failure_model(), 8, 0, 1e9, 1, 60, 1);
    EXPECT_DOUBLE_EQ(r.expected_interruptions, 0);
    EXPECT_DOUBLE_EQ(r.goodput, 1);
    EXPECT_DOUBLE_EQ(r.lost_seconds, 0);
}

TEST(OpsReliability, CheckpointPathTakesItsSlowestStage) {
    // 8 GB per node over 8 GPUs at 50 GB/s: 0.02 s; to storage at 2 GB/s: 4 s -> storage.
    CheckpointWrite w = checkpoint_write({8e9, 8, 50, 2, 1, 0});
    EXPECT_DOUBLE_EQ(w.device_to_host_seconds, 0.02);
    EXPECT_DOUBLE_EQ(w.seconds, 4);
    EXPECT_EQ(w.bound_by, "storage");
    // 100 nodes into 100 GB/s of shared storage: 8e11 / 1e11 = 8 s.
    w = checkpoint_write({8e9, 8, 50, 2, 100, 100});
    EXPECT_DOUBLE_EQ(w.seconds, 8);
    EXPECT_EQ(w.bound_by, "shared_storage");
    // A slow host link binds: 8 GB / 8 GPUs at 0.1 GB/s = 10 s.
    w = checkpoint_write({8e9, 8, 0.1, 2, 1, 0});
    EXPECT_DOUBLE_EQ(w.seconds, 10);
    EXPECT_EQ(w.bound_by, "pcie");
    // A CPU server has no device-to-host stage.
    w = checkpoint_write({8e9, 0, 0, 2, 1, 0});
    EXPECT_DOUBLE_EQ(w.seconds, 4);
}

TEST(OpsReliability, RestoreReadsTheSamePathBack) {
    // 8 GB per node, storage writes at 2 GB/s and reads at 4 GB/s: written in 4 s, read back in 2 s; shared
    // storage reading 200 GB/s for 100 nodes: 8e11 / 2e11 = 4 s.
    CheckpointPath p{8e9, 8, 50, 2, 1, 0, 4, 0};
    EXPECT_DOUBLE_EQ(checkpoint_read(p).seconds, 2);
    p.nodes = 100, p.storage_aggregate_GBps = 100, p.storage_aggregate_read_GBps = 200;
    EXPECT_DOUBLE_EQ(checkpoint_write(p).seconds, 8);
    EXPECT_DOUBLE_EQ(checkpoint_read(p).seconds, 4);
    EXPECT_EQ(checkpoint_read(p).bound_by, "shared_storage");
}

TEST(OpsReliability, Llama3ScaleCheckpointTakesSecondsToMinutes) {
    // 405B full fine-tuning state, 14 B/param = 5.67e12 B (5.16 TiB) from 2,048 nodes. Summing per-node rates
    // would write it in 0.1 s; one parallel file system appliance (80 GB/s for all nodes, data/storage/
    // parallel-fs.yaml) takes 5.67e12 / 80e9 = 70.9 s.
    const double bytes = 405e9 * 14;
    const CheckpointWrite w = checkpoint_write({bytes / 2048, 8, 55, 48, 2048, 80, 48, 80});
    EXPECT_NEAR(w.seconds, bytes / 80e9, 1e-9);
    EXPECT_EQ(w.bound_by, "shared_storage");
    EXPECT_GT(w.seconds, 10);
    EXPECT_LT(w.seconds, 30 * 60);
}

TEST(OpsReliability, IntervalNeverShorterThanAWriteOrAStep) {
    // Daly's 100 s with a 300 s write: every 300 s (a shorter interval would do nothing but write).
    EXPECT_DOUBLE_EQ(checkpoint_interval_rules(100, 300, 0), 300);
    // A 250 s step: checkpoints fall between steps, at least one step apart: 100 s -> 250 s; 600 s -> 750 s.
    EXPECT_DOUBLE_EQ(checkpoint_interval_rules(100, 10, 250), 250);
    EXPECT_DOUBLE_EQ(checkpoint_interval_rules(600, 10, 250), 750);
    EXPECT_DOUBLE_EQ(checkpoint_interval_rules(750, 10, 250), 750);
    // Through reliability(): 1 failure per GPU-hour on 100 GPUs (M = 36 s) with a 60 s write: C >= 2M, Daly gives
    // M = 36 s; the rules lift it to the write (60 s) and then to whole 45 s steps: 90 s.
    FailureModel one{{{"all", "GPU", 1.0}}, "test"};
    const ReliabilityResult r = reliability(one, 100, 36000, 1e9, 60, 10, 0, 45);
    EXPECT_DOUBLE_EQ(r.checkpoint_interval_seconds, 90);
    EXPECT_GE(r.checkpoint_interval_seconds, r.checkpoint_write_seconds);
}

TEST(OpsReliability, LoraCheckpointSkipsTheFrozenBase) {
    // Full FT of 8.03e9 params: 14 B each = 112.4 GB; LoRA adapters only: 0.59 GB; an adapter
    // checkpoint that also re-saves the bf16 base: + 16.06 GB.
    EXPECT_DOUBLE_EQ(checkpoint_bytes({8.03e9, 0, 2, 4, 8}), 8.03e9 * 14);
    EXPECT_DOUBLE_EQ(checkpoint_bytes({41943040, 8.03e9, 2, 4, 8}), 587202560 + 8.03e9 * 2);
}

}  // namespace
}  // namespace ftb
