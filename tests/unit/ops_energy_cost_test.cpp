// Energy and cost (src/ops/energy_cost.*), pinned to hand-computed numbers.
#include <gtest/gtest.h>

#include "ops/energy_cost.hpp"
#include "ops/prices.hpp"
#include "spec/catalog.hpp"
#include "test_paths.hpp"

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

SystemSpec server(bool cpu_only, int devices_per_node, const std::string& name = "") {
    SystemSpec s;
    s.name = name;
    s.cpu_only = cpu_only;
    s.devices_per_node = devices_per_node;
    return s;
}

TEST(OpsEnergyCost, GpuJob) {
    // 2 nodes x 8600 W x 10 h = 172 kWh at the servers; x 1.3 PUE = 223.6 kWh; x 0.15 = 33.54.
    // 16 GPUs x 10 h x 2.50 = 400; total 433.54.
    const OpsSpec ops = ops_with(2.5, std::nullopt);
    const EnergyCost e = energy_and_cost(10 * 3600, 8600, 2, ops, node_price(ops, server(false, 8)));
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
    const OpsSpec ops = ops_with(2.5, 1.2);
    const EnergyCost e = energy_and_cost(5 * 3600, 1000, 3, ops, node_price(ops, server(true, 2)));
    EXPECT_NEAR(e.energy_kwh, 19.5, 1e-9);
    EXPECT_NEAR(e.energy_cost, 2.925, 1e-9);
    ASSERT_TRUE(e.compute_cost);
    EXPECT_NEAR(*e.compute_cost, 18, 1e-9);
    EXPECT_NEAR(*e.total_cost, 20.925, 1e-9);
    // Without a node price (and no catalog price for an unnamed system) a CPU server has no compute cost.
    const OpsSpec gpu_only = ops_with(2.5, std::nullopt);
    EXPECT_FALSE(energy_and_cost(5 * 3600, 1000, 3, gpu_only, node_price(gpu_only, server(true, 2))).total_cost);
}

TEST(OpsEnergyCost, GpuServerFallsBackToNodePrice) {
    // 1 node x 4 h x 30 per node-hour = 120.
    const OpsSpec ops = ops_with(std::nullopt, 30);
    const EnergyCost e = energy_and_cost(4 * 3600, 5000, 1, ops, node_price(ops, server(false, 8)));
    ASSERT_TRUE(e.compute_cost);
    EXPECT_NEAR(*e.compute_cost, 120, 1e-9);
}

TEST(OpsEnergyCost, NoPriceMeansNoCostButEnergyStillCounts) {
    const OpsSpec ops = ops_with(std::nullopt, std::nullopt);
    const EnergyCost e = energy_and_cost(3600, 2000, 1, ops, node_price(ops, server(false, 4)));
    EXPECT_FALSE(e.compute_cost);
    EXPECT_FALSE(e.total_cost);
    EXPECT_NEAR(e.energy_kwh, 2.6, 1e-12);  // 2 kWh x 1.3
}

TEST(OpsEnergyCost, CatalogPriceIncludesPower) {
    // data/prices/dell-poweredge-xe9680-8x-h100-sxm.yaml: 39.33 per node-hour, an all-in rental price.
    // 2 h x 39.33 = 78.66; the electricity (10 kW x 2 h x 1.3 x 0.15 = 3.9) is not added on top.
    const OpsSpec ops = ops_with(std::nullopt, std::nullopt);
    const auto price = node_price(ops, server(false, 8, "dell-poweredge-xe9680-8x-h100-sxm"));
    ASSERT_TRUE(price);
    EXPECT_TRUE(price->includes_power);
    EXPECT_EQ(price->date, "2024-12");
    EXPECT_FALSE(price->sources.empty());
    const EnergyCost e = energy_and_cost(2 * 3600, 10000, 1, ops, price);
    EXPECT_NEAR(e.energy_cost, 3.9, 1e-9);
    ASSERT_TRUE(e.total_cost);
    EXPECT_NEAR(*e.total_cost, 78.66, 1e-9);
    // The job's own price wins over the catalog's.
    const OpsSpec own = ops_with(2.0, std::nullopt);
    EXPECT_DOUBLE_EQ(node_price(own, server(false, 8, "dell-poweredge-xe9680-8x-h100-sxm"))->per_node_hour, 16);
}

TEST(OpsEnergyCost, AmortisedPurchaseAddsPower) {
    // tests/data/prices/amortised.yaml read by a catalog rooted there: 175,200 over 4 years = 5.0 per hour;
    // 10 h: 50 + energy 1 kW x 10 h x 1.3 x 0.15 = 1.95 -> 51.95.
    const Catalog cat(std::string(ftb_test::test_data()) + "/catalog");
    const auto price = cat.price("amortised-server");
    ASSERT_TRUE(price);
    EXPECT_NEAR(price->per_node_hour, 5.0, 1e-12);
    EXPECT_FALSE(price->includes_power);
    const EnergyCost e = energy_and_cost(10 * 3600, 1000, 1, ops_with(std::nullopt, std::nullopt), price);
    EXPECT_NEAR(*e.total_cost, 51.95, 1e-9);
    EXPECT_FALSE(cat.price("no-such-server"));
}

}  // namespace
}  // namespace ftb
