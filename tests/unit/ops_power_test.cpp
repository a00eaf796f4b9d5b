// Power model (src/ops/power.*): device draw between idle and TDP, node draw against the power
// supplies and their redundancy, power caps. Expected numbers are worked out in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "ftbound/error.hpp"
#include "ops/power.hpp"
#include "spec/catalog.hpp"

namespace ftb {
namespace {

DeviceSpec h100_sxm() {  // figures of data/devices/gpus/h100-sxm.yaml
    DeviceSpec d;
    d.name = "h100-sxm";
    d.memory_bandwidth_GBps = 3350;
    d.peak_tflops.bf16 = 989.4;
    d.sm_count = 132;
    d.tdp_w = 700;
    d.idle_w = 70;
    d.host_link = "pcie5";
    return d;
}

DeviceSpec h100_pcie() {  // data/devices/gpus/h100-pcie.yaml
    DeviceSpec d;
    d.name = "h100-pcie";
    d.memory_bandwidth_GBps = 2000;
    d.peak_tflops.bf16 = 756;
    d.sm_count = 114;
    d.tdp_w = 350;
    d.idle_w = 50;
    d.host_link = "pcie5";
    return d;
}

// An 8-GPU node built like the Dell XE9680 catalog entry: 8 x H100 SXM behind NVSwitch, 3000 W of
// everything else, 6 x 2800 W supplies in 3+3 (n+n). GPU 0 has an NVLink4 (450 GB/s per direction)
// to the switch and a PCIe 5 x16 (63 GB/s) to its CPU.
SystemSpec xe9680_like() {
    SystemSpec s;
    s.name = "xe9680-like";
    s.device = h100_sxm();
    s.devices_per_node = 8;
    s.node_base_power_w = 3000;
    s.power = {6, 2800, 3, "n+n"};
    s.components = {{"cpu0", ComponentKind::cpu_socket, 0}, {"nvs", ComponentKind::nvswitch, 0}};
    for (int i = 0; i < 8; ++i) s.components.push_back({"gpu" + std::to_string(i), ComponentKind::gpu, 0});
    for (int i = 0; i < 8; ++i) {
        s.links.push_back({2 + i, 1, LinkSpec{"nvlink4", 450, 2, 0.816}});
        s.links.push_back({2 + i, 0, LinkSpec{"pcie5", 63, 2, 0.88}});
    }
    return s;
}

TEST(OpsPower, DeviceSplitPricesMemoryAndLinksByTheBit) {
    // HBM: 3350e9 B/s x 8 bit x 3.9 pJ = 104.52 W; links: (450 + 63) GB/s x 2 directions x 8 x 5.5 pJ
    // = 45.144 W; compute: (700 - 70) - 104.52 - 45.144 = 480.336 W.
    const DevicePowerSplit s = device_power_split(h100_sxm(), 513);
    EXPECT_NEAR(s.memory_w, 104.52, 1e-9);
    EXPECT_NEAR(s.link_w, 45.144, 1e-9);
    EXPECT_NEAR(s.compute_w, 480.336, 1e-9);
    // 70 + 0.5 x 480.336 + 0.2 x 104.52 + 0.1 x 45.144 = 335.5864 W
    EXPECT_NEAR(device_power_w(h100_sxm(), s, 0.5, 0.2, 0.1), 335.5864, 1e-9);
    EXPECT_DOUBLE_EQ(device_power_w(h100_sxm(), s, 0, 0, 0), 70);
    EXPECT_DOUBLE_EQ(device_power_w(h100_sxm(), s, 1, 1, 1), 700);
    EXPECT_DOUBLE_EQ(device_power_w(h100_sxm(), s, 3, -1, NAN), 70 + 480.336);  // clamped, no NaN
}

TEST(OpsPower, CpuSocketSpendsItsWholeRangeOnCompute) {
    DeviceSpec cpu;
    cpu.kind = DeviceKind::cpu;
    cpu.memory_bandwidth_GBps = 307;
    cpu.tdp_w = 350;
    cpu.idle_w = 90;
    const DevicePowerSplit s = device_power_split(cpu, 0);
    EXPECT_DOUBLE_EQ(s.memory_w, 0);
    EXPECT_DOUBLE_EQ(s.compute_w, 260);
}

TEST(OpsPower, FullLoadOnNPlusNSuppliesIsAWeakPoint) {
    // 8 x 700 + 3000 = 8600 W; 6 x 2800 = 16800 W; after losing 3: 8400 W < 8600 W -> flagged.
    // Needs ceil(8600 / 2800) = 4 supplies: 2 of 6 may fail.
    // After the failure the GPUs share 8400 - 3000 = 5400 W: 675 W each against a 700 W demand,
    // rate ((675 - 70) / (700 - 70))^(1/3) = 0.98659.
    const PowerDraw p = node_power(xe9680_like(), 1, 1, 1);
    EXPECT_DOUBLE_EQ(p.device_w, 700);
    EXPECT_DOUBLE_EQ(p.node_w, 8600);
    EXPECT_DOUBLE_EQ(p.psu_capacity_w, 16800);
    EXPECT_DOUBLE_EQ(p.psu_capacity_after_failure_w, 8400);
    EXPECT_EQ(p.psu_failures_tolerated, 2);
    EXPECT_TRUE(p.exceeds_redundant_capacity);
    EXPECT_FALSE(p.exceeds_capacity);
    EXPECT_NEAR(p.throttle_factor, 0.986594, 1e-6);
    EXPECT_DOUBLE_EQ(p.sustained_factor, 1);
    EXPECT_NE(p.note.find("throttle"), std::string::npos) << p.note;
}

TEST(OpsPower, PartialLoadFitsOneSideOfTheSupplies) {
    // 70 + 0.6 x 480.336 + 0.3 x 104.52 + 0.2 x 45.144 = 398.5864 W per GPU; node 6188.69 W < 8400 W.
    const PowerDraw p = node_power(xe9680_like(), 0.6, 0.3, 0.2);
    EXPECT_NEAR(p.device_w, 398.5864, 1e-9);
    EXPECT_NEAR(p.node_w, 8 * 398.5864 + 3000, 1e-9);
    EXPECT_FALSE(p.exceeds_redundant_capacity);
    EXPECT_EQ(p.psu_failures_tolerated, 3);  // ceil(6188.7 / 2800) = 3 needed
    EXPECT_DOUBLE_EQ(p.throttle_factor, 1);
    EXPECT_TRUE(p.note.empty());
}

TEST(OpsPower, FourPcieGpusFitOneOfTwoSupplies) {
    // R760xa-like: 4 x 350 + 900 = 2300 W against 2 x 2800 W in 1+1: one supply carries it.
    SystemSpec s;
    s.device = h100_pcie();
    s.devices_per_node = 4;
    s.node_base_power_w = 900;
    s.power = {2, 2800, 1, "n+n"};
    const PowerDraw p = node_power(s, 1, 1, 1);
    EXPECT_DOUBLE_EQ(p.node_w, 2300);
    EXPECT_DOUBLE_EQ(p.psu_capacity_after_failure_w, 2800);
    EXPECT_FALSE(p.exceeds_redundant_capacity);
    EXPECT_EQ(p.psu_failures_tolerated, 1);
}

TEST(OpsPower, UndersizedSuppliesLimitEvenWithAllWorking) {
    // 8600 W on 3 x 2800 W (none redundant): the GPUs get (8400 - 3000) / 8 = 675 W each, always.
    SystemSpec s = xe9680_like();
    s.power = {3, 2800, 0, "none"};
    const PowerDraw p = node_power(s, 1, 1, 1);
    EXPECT_TRUE(p.exceeds_capacity);
    EXPECT_NEAR(p.sustained_factor, 0.986594, 1e-6);
    EXPECT_EQ(p.psu_failures_tolerated, 0);
}

TEST(OpsPower, LosingTheSparesBelowTheBaseLoadTakesTheNodeDown) {
    // 6 x 1000 W in 3+3: 3000 W left, all of it the base load -> the GPUs get 0 W, below idle.
    SystemSpec s = xe9680_like();
    s.power = {6, 1000, 3, "n+n"};
    const PowerDraw p = node_power(s, 1, 1, 1);
    EXPECT_TRUE(p.exceeds_capacity);
    EXPECT_DOUBLE_EQ(p.throttle_factor, 0);
    EXPECT_FALSE(std::isnan(p.sustained_factor));
}

TEST(OpsPower, NoSuppliesListedMeansNoVerdict) {
    SystemSpec s = xe9680_like();
    s.power = {};
    const PowerDraw p = node_power(s, 1, 1, 1);
    EXPECT_FALSE(p.psu_known);
    EXPECT_FALSE(p.exceeds_redundant_capacity);
    EXPECT_DOUBLE_EQ(p.node_w, 8600);
}

TEST(OpsPower, CapFollowsTheCubeLaw) {
    // H100 SXM capped at 350 W: ((350 - 70) / (700 - 70))^(1/3) = 0.76314.
    EXPECT_NEAR(power_capped_rate_factor(h100_sxm(), 350), 0.763143, 1e-6);
    EXPECT_DOUBLE_EQ(power_capped_rate_factor(h100_sxm(), 700), 1);
    EXPECT_DOUBLE_EQ(power_capped_rate_factor(h100_sxm(), 500, 400), 1);  // demand below the cap
    EXPECT_DOUBLE_EQ(power_capped_rate_factor(h100_sxm(), 60), 0);        // below idle
}

TEST(OpsPower, H100PcieIsPowerLimitedAgainstTheSxm) {
    // Demand of the PCIe part at its datasheet peak: 50 + 630 x (114/132) x ((756/114)/(989.4/132))^3
    // = 426.82 W > 350 W, so it sustains ((350 - 50) / 376.82)^(1/3) = 0.92682 of its peak.
    EXPECT_NEAR(power_demand_at_peak_w(h100_pcie(), h100_sxm()), 426.815, 1e-3);
    EXPECT_NEAR(sustained_rate_factor(h100_pcie(), h100_sxm()), 0.926825, 1e-6);
    EXPECT_DOUBLE_EQ(sustained_rate_factor(h100_sxm(), h100_sxm()), 1);
}

TEST(OpsPower, A100PcieAgainstSxmMatchesMeasuredMatmulRatio) {
    // Same die (108 SMs, same 312 TFLOP/s peak) at 300 W vs 400 W. Model: demand 40 + 340 = 380 W,
    // rate ((300 - 40) / 340)^(1/3) = 0.9145. Measured best bf16 matmul (validation/microbench.csv
    // GT0419 / GT0418, stas00/ml-engineering): A100 PCIe 252.9 vs A100 SXM 271.2 TFLOP/s = 0.9325.
    // The measured card is taken to be the 300 W (80 GB) PCIe part.
    DeviceSpec sxm, pcie;
    sxm.sm_count = pcie.sm_count = 108;
    sxm.peak_tflops.bf16 = pcie.peak_tflops.bf16 = 312;
    sxm.tdp_w = 400;
    sxm.idle_w = 60;
    pcie.tdp_w = 300;
    pcie.idle_w = 40;
    const double model = sustained_rate_factor(pcie, sxm);
    EXPECT_NEAR(model, 0.914460, 1e-6);
    EXPECT_NEAR(model, 252.9 / 271.2, 0.03);
}

TEST(OpsPower, CatalogXe9680IsFlaggedAndDgxH100IsNot) {
    const Catalog& cat = Catalog::instance();
    const SystemSpec xe = cat.system("dell-poweredge-xe9680-8x-h100-sxm", {});
    const PowerDraw p = node_power(xe, 1, 1, 1);
    EXPECT_TRUE(p.exceeds_redundant_capacity) << p.node_w << " W vs " << p.psu_capacity_after_failure_w;
    const SystemSpec dgx = cat.system("dgx-h100", {});
    EXPECT_FALSE(node_power(dgx, 1, 1, 1).exceeds_redundant_capacity);
}

}  // namespace
}  // namespace ftb
