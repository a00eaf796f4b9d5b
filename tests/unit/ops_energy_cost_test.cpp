// Energy and cost (src/ops/energy_cost.*), pinned to hand-computed numbers.
#include <gtest/gtest.h>

#include "ops/energy_cost.hpp"

namespace ftb {
namespace {

OpsSpec ops_with(std::optional<double> gpu_price, std::optional<double> node_price) {
    OpsSpec o;
    o.price_per_gpu_hour = gpu_price;
    o.price_per_node_hour = node_price;
    o.electricity_per_kwh = 0.15;
    o.pue = 1.3;
    return o;
}

TEST(OpsEnergyCost, GpuJob) {
    // 2 nodes x 8600 W x 10 h = 172 kWh at the servers; x 1.3 PUE = 223.6 kWh; x 0.15 = 33.54.
    // 16 GPUs x 10 h x 2.50 = 400; total 433.54.
    const EnergyCost e = energy_and_cost(10 * 3600, 8600, 2, 16, ops_with(2.5, std::nullopt), false);
    EXPECT_NEAR(e.it_energy_kwh, 172, 1e-9);
    EXPECT_NEAR(e.energy_kwh, 223.6, 1e-9);
    EXPECT_NEAR(e.energy_cost, 33.54, 1e-9);
    ASSERT_TRUE(e.compute_cost && e.total_cost);
    EXPECT_NEAR(*e.compute_cost, 400, 1e-9);
    EXPECT_NEAR(*e.total_cost, 433.54, 1e-9);
}

TEST(OpsEnergyCost, CpuServersArePricedPerNodeHour) {
    // 3 nodes x 1000 W x 5 h = 15 kWh; x 1.3 = 19.5 kWh; x 0.15 = 2.925. 3 x 5 x 1.20 = 18 (the GPU
    // price does not apply to a CPU server); total 20.925.
    const EnergyCost e = energy_and_cost(5 * 3600, 1000, 3, 0, ops_with(2.5, 1.2), true);
    EXPECT_NEAR(e.energy_kwh, 19.5, 1e-9);
    EXPECT_NEAR(e.energy_cost, 2.925, 1e-9);
    ASSERT_TRUE(e.compute_cost);
    EXPECT_NEAR(*e.compute_cost, 18, 1e-9);
    EXPECT_NEAR(*e.total_cost, 20.925, 1e-9);
    // Without a node price a CPU server has no compute cost.
    EXPECT_FALSE(energy_and_cost(5 * 3600, 1000, 3, 0, ops_with(2.5, std::nullopt), true).total_cost);
}

TEST(OpsEnergyCost, GpuServerFallsBackToNodePrice) {
    // 1 node x 4 h x 30 per node-hour = 120.
    const EnergyCost e = energy_and_cost(4 * 3600, 5000, 1, 8, ops_with(std::nullopt, 30), false);
    ASSERT_TRUE(e.compute_cost);
    EXPECT_NEAR(*e.compute_cost, 120, 1e-9);
}

TEST(OpsEnergyCost, NoPriceMeansNoCostButEnergyStillCounts) {
    const EnergyCost e = energy_and_cost(3600, 2000, 1, 4, ops_with(std::nullopt, std::nullopt), false);
    EXPECT_FALSE(e.compute_cost);
    EXPECT_FALSE(e.total_cost);
    EXPECT_NEAR(e.energy_kwh, 2.6, 1e-12);  // 2 kWh x 1.3
}

}  // namespace
}  // namespace ftb
