// Routing and link sharing over SystemSpec graphs. Expected numbers are derived by hand in comments.
#include <gtest/gtest.h>

#include "ftbound/error.hpp"
#include "system/topology.hpp"

namespace ftb {
namespace {

LinkSpec wire(const char* name, double GBps, double latency_us = 1.0, double fraction = 1.0) {
    return LinkSpec{name, GBps, latency_us, fraction};
}

// cpu0 <- sw0 <- gpu0..gpu3: four GPUs behind one PCIe switch uplink.
SystemSpec switch_box(double uplink_GBps, double fraction) {
    SystemSpec s;
    s.name = "switch-box";
    s.components = {{"cpu0", ComponentKind::cpu_socket, 0}, {"sw0", ComponentKind::pcie_switch, 0}};
    for (int g = 0; g < 4; ++g) s.components.push_back({"gpu" + std::to_string(g), ComponentKind::gpu, 0});
    s.links.push_back({1, 0, wire("pcie5", uplink_GBps, 1.0, fraction)});
    for (int g = 0; g < 4; ++g) s.links.push_back({2 + g, 1, wire("pcie5", 64, 1.0, fraction)});
    return s;
}

TEST(SystemTopology, FourGpusShareOneSwitchUplink) {
    // Uplink 64 GB/s x 0.9 = 57.6 GB/s, four flows -> 14.4 GB/s each (each GPU's own x16 link has 57.6).
    // 16 GB / 14.4 GB/s = 1.111111 s, plus two hops of 1 us.
    const SystemSpec s = switch_box(64, 0.9);
    const Topology t(s);
    std::vector<Flow> flows;
    for (int g = 0; g < 4; ++g) flows.push_back({t.gpu(g), t.host_memory(0), 16e9});
    const auto r = share_links(t, flows);
    ASSERT_EQ(r.size(), 4u);
    for (const auto& f : r) {
        EXPECT_NEAR(f.initial_rate_GBps, 14.4, 1e-9);
        EXPECT_NEAR(f.seconds, 16e9 / 14.4e9 + 2e-6, 1e-9);
        EXPECT_EQ(f.bound_by.link, 0);        // the uplink
        EXPECT_TRUE(f.bound_by.a_to_b);       // links[0] = {a: sw0, b: cpu0}: traffic runs a -> b
    }
}

TEST(SystemTopology, UplinkDirectionIsReportedFromLinkEnds) {
    // a_to_b means traffic from links[i].a to links[i].b.
    const SystemSpec s = switch_box(64, 1.0);
    const Topology t(s);
    const Route r = t.route(t.gpu(0), t.host_memory(0));
    ASSERT_EQ(r.hops.size(), 2u);
    EXPECT_EQ(r.hops[0].link, 1);  // gpu0 -> sw0: links[1] = {a: gpu0, b: sw0}
    EXPECT_TRUE(r.hops[0].a_to_b);
    EXPECT_EQ(r.hops[1].link, 0);  // sw0 -> cpu0: links[0] = {a: sw0, b: cpu0}
    EXPECT_TRUE(r.hops[1].a_to_b);
}

TEST(SystemTopology, ShorterFlowFinishesFirstAndFreesBandwidth) {
    // One 10 GB/s wire, flows of 1 GB and 3 GB: 5 GB/s each until the first ends at 0.2 s having moved
    // 1 GB of each; the second then has 2 GB left at 10 GB/s = 0.2 s more -> 0.4 s. Latency 0.
    SystemSpec s;
    s.name = "wire";
    s.components = {{"gpu0", ComponentKind::gpu, 0}, {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 1, wire("x", 10, 0.0)}};
    const Topology t(s);
    const auto r = share_links(t, {{0, 1, 1e9}, {0, 1, 3e9}});
    EXPECT_NEAR(r[0].seconds, 0.2, 1e-12);
    EXPECT_NEAR(r[1].seconds, 0.4, 1e-12);
}

TEST(SystemTopology, MaxMinFairnessGivesLeftoverToUnconstrainedFlow) {
    // gpu0 -(5)- sw -(12)- cpu0, gpu1 -(20)- sw. Fair share on the uplink would be 6 each, but gpu0's
    // own 5 GB/s wire binds first: gpu0 gets 5, gpu1 gets the remaining 12 - 5 = 7.
    SystemSpec s;
    s.name = "maxmin";
    s.components = {{"gpu0", ComponentKind::gpu, 0},
                    {"gpu1", ComponentKind::gpu, 0},
                    {"sw0", ComponentKind::pcie_switch, 0},
                    {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 2, wire("a", 5, 0)}, {1, 2, wire("b", 20, 0)}, {2, 3, wire("up", 12, 0)}};
    const Topology t(s);
    const auto r = share_links(t, {{0, 3, 10e9}, {1, 3, 14e9}});
    EXPECT_NEAR(r[0].initial_rate_GBps, 5, 1e-12);
    EXPECT_EQ(r[0].bound_by.link, 0);
    EXPECT_NEAR(r[1].initial_rate_GBps, 7, 1e-12);
    EXPECT_EQ(r[1].bound_by.link, 2);
    // Both finish at 2 s (10/5 and 14/7): no rebalancing needed.
    EXPECT_NEAR(r[0].seconds, 2.0, 1e-12);
    EXPECT_NEAR(r[1].seconds, 2.0, 1e-12);
}

TEST(SystemTopology, OppositeDirectionsDoNotShare) {
    SystemSpec s;
    s.name = "duplex";
    s.components = {{"gpu0", ComponentKind::gpu, 0}, {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 1, wire("pcie4", 32, 0, 0.8)}};
    const Topology t(s);
    const auto r = share_links(t, {{0, 1, 25.6e9}, {1, 0, 25.6e9}});
    EXPECT_NEAR(r[0].initial_rate_GBps, 25.6, 1e-12);  // 32 x 0.8, full rate each way
    EXPECT_NEAR(r[1].initial_rate_GBps, 25.6, 1e-12);
    EXPECT_NEAR(r[0].seconds, 1.0, 1e-12);
}

TEST(SystemTopology, FewestHopsThenWidestPath) {
    // gpu0 reaches cpu0 through swA (uplink 16) or swB (uplink 32), both 2 hops: take swB.
    // A 1-hop direct wire of 8 GB/s would beat both on hop count.
    SystemSpec s;
    s.name = "paths";
    s.components = {{"gpu0", ComponentKind::gpu, 0},
                    {"swA", ComponentKind::pcie_switch, 0},
                    {"swB", ComponentKind::pcie_switch, 0},
                    {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 1, wire("x", 64, 0)}, {1, 3, wire("x", 16, 0)}, {0, 2, wire("x", 64, 0)}, {2, 3, wire("x", 32, 0)}};
    {
        const Topology t(s);
        const Route r = t.route(0, 3);
        EXPECT_EQ(r.components, (std::vector<int>{0, 2, 3}));
        EXPECT_DOUBLE_EQ(r.bottleneck_GBps, 32);
    }
    s.links.push_back({0, 3, wire("direct", 8, 0)});
    const Topology t(s);
    const Route r = t.route(0, 3);
    EXPECT_EQ(r.components, (std::vector<int>{0, 3}));
    EXPECT_DOUBLE_EQ(r.bottleneck_GBps, 8);
}

TEST(SystemTopology, GpusAreNotTransitNodes) {
    // gpu0 - gpu1 - cpu0: host traffic of gpu0 may not be forwarded by gpu1.
    SystemSpec s;
    s.name = "chain";
    s.components = {{"gpu0", ComponentKind::gpu, 0}, {"gpu1", ComponentKind::gpu, 0}, {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 1, wire("nvlink4", 450)}, {1, 2, wire("pcie5", 64)}};
    const Topology t(s);
    EXPECT_THROW(t.route(0, 2), InputError);
    EXPECT_NO_THROW(t.route(0, 1));
}

TEST(SystemTopology, NvmeAndHostMemoryEndpoints) {
    // nvme0 -(pcie4 x4: 8 GB/s)- cpu0 -(pcie5 64)- gpu0: an NVMe -> GPU read is bound by the drive link.
    SystemSpec s;
    s.name = "nvme";
    s.components = {{"cpu0", ComponentKind::cpu_socket, 0}, {"gpu0", ComponentKind::gpu, 0}, {"nvme0", ComponentKind::nvme, 0}};
    s.links = {{1, 0, wire("pcie5", 64, 1)}, {2, 0, wire("pcie4-x4", 8, 10)}};
    const Topology t(s);
    EXPECT_EQ(t.nvme(), 2);
    EXPECT_EQ(t.host_memory_near(t.gpu(0)), 0);
    const auto r = share_links(t, {{t.nvme(), t.gpu(0), 8e9}});
    EXPECT_NEAR(r[0].seconds, 1.0 + 11e-6, 1e-12);  // 8 GB / 8 GB/s + 10 us + 1 us
    EXPECT_EQ(r[0].bound_by.link, 1);
}

TEST(SystemTopology, ComposedNvlinkBoxUsesTheSwitch) {
    DeviceSpec gpu;
    gpu.name = "h100-sxm";
    DeviceSpec cpu;
    cpu.name = "xeon-8480";
    cpu.kind = DeviceKind::cpu;
    const SystemSpec s = compose_system(gpu, 8, wire("nvlink4", 450, 1, 0.824), wire("pcie5", 64, 1, 0.9), cpu, 2,
                                        wire("upi-2.0", 64, 0.1));
    EXPECT_EQ(s.devices_per_node, 8);
    const Topology t(s);
    const Route r = t.route(t.gpu(0), t.gpu(5));
    ASSERT_EQ(r.components.size(), 3u);
    EXPECT_EQ(s.components[r.components[1]].kind, ComponentKind::nvswitch);
    EXPECT_NEAR(r.bottleneck_GBps, 450 * 0.824, 1e-9);
    // Round-robin sockets: gpu0 and gpu2 on socket 0, gpu1 on socket 1.
    EXPECT_EQ(s.components[t.gpu(1)].socket, 1);
    EXPECT_EQ(t.host_memory_near(t.gpu(1)), t.host_memory(1));
    // Eight GPUs all writing to their own socket's memory: 4 flows per socket, but each has its own
    // PCIe link to the socket, so each gets 64 x 0.9 = 57.6 GB/s.
    std::vector<Flow> flows;
    for (int g = 0; g < 8; ++g) flows.push_back({t.gpu(g), t.host_memory_near(t.gpu(g)), 57.6e9});
    for (const auto& f : share_links(t, flows)) EXPECT_NEAR(f.initial_rate_GBps, 57.6, 1e-9);
}

TEST(SystemTopology, ComposedPcieBoxCrossesTheHostBridge) {
    DeviceSpec gpu;
    gpu.name = "h100-pcie";
    DeviceSpec cpu;
    cpu.kind = DeviceKind::cpu;
    const SystemSpec s = compose_system(gpu, 4, wire("pcie5", 64), wire("pcie5", 64, 1, 0.9), cpu, 2,
                                        wire("upi-2.0", 48, 0.5, 0.75));
    const Topology t(s);
    EXPECT_LT(t.component("nvs"), 0);
    const Route same_socket = t.route(t.gpu(0), t.gpu(2));  // gpu0 - cpu0 - gpu2
    EXPECT_EQ(same_socket.hops.size(), 2u);
    const Route cross = t.route(t.gpu(0), t.gpu(1));  // gpu0 - cpu0 - cpu1 - gpu1
    EXPECT_EQ(cross.hops.size(), 3u);
    EXPECT_NEAR(cross.bottleneck_GBps, 36, 1e-12);  // UPI 48 x 0.75
    EXPECT_NEAR(cross.latency_us, 2.5, 1e-12);
}

TEST(SystemTopology, ComposedXgmiMeshSplitsTheGpuLinks) {
    DeviceSpec gpu;
    gpu.name = "mi300x";
    DeviceSpec cpu;
    cpu.kind = DeviceKind::cpu;
    // 8 GPUs, 448 GB/s of Infinity Fabric per GPU -> 64 GB/s to each of 7 peers.
    const SystemSpec s = compose_system(gpu, 8, wire("xgmi", 448), wire("pcie5", 64), cpu, 2, wire("xgmi-socket", 64));
    const Topology t(s);
    const Route r = t.route(t.gpu(0), t.gpu(7));
    EXPECT_EQ(r.hops.size(), 1u);
    EXPECT_NEAR(r.bottleneck_GBps, 64, 1e-12);
}

TEST(SystemTopology, BadInputsAreUserErrors) {
    DeviceSpec gpu, cpu;
    EXPECT_THROW(compose_system(gpu, 0, wire("nvlink4", 450), wire("pcie5", 64), cpu, 2, wire("upi", 48)), InputError);
    EXPECT_THROW(compose_system(gpu, 8, wire("nvlink4", 450), wire("pcie5", 0), cpu, 2, wire("upi", 48)), InputError);
    SystemSpec s;
    s.name = "bad";
    s.components = {{"gpu0", ComponentKind::gpu, 0}, {"cpu0", ComponentKind::cpu_socket, 0}};
    s.links = {{0, 1, wire("x", 0)}};
    EXPECT_THROW(Topology{s}, InputError);
    s.links = {{0, 5, wire("x", 1)}};
    EXPECT_THROW(Topology{s}, InputError);
}

}  // namespace
}  // namespace ftb
