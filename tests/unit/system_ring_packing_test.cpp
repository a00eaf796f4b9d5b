// NCCL-style ring channels over switchless fabrics and the per-GPU NIC share. Expected numbers are
// derived by hand in the comments (NCCL's search outcome: channels over all GPU orders together fill
// every GPU's links, NVIDIA/nccl src/graph/search.cc ncclTopoCompute).
#include <gtest/gtest.h>

#include <string>

#include "ftbound/error.hpp"
#include "system/collectives.hpp"
#include "system/nic_share.hpp"
#include "system/ring_packing.hpp"
#include "system/topology.hpp"

namespace ftb {
namespace {

LinkSpec wire(const char* name, double GBps, double fraction = 1.0) { return LinkSpec{name, GBps, 1.0, fraction}; }

DeviceSpec gpu(const char* name) {
    DeviceSpec d;
    d.name = name;
    d.vendor = "nvidia";
    return d;
}

// n GPUs, every pair joined by `pair`; GPU g on socket g % 2 through PCIe; sockets joined by `socket`.
SystemSpec full_mesh(int n, const LinkSpec& pair, const LinkSpec& host = wire("pcie5", 64, 0.9),
                     const LinkSpec& socket = wire("upi", 64, 0.8)) {
    SystemSpec s;
    s.name = "mesh";
    s.device = gpu("h100-sxm");
    s.devices_per_node = n;
    s.components = {{"cpu0", ComponentKind::cpu_socket, 0}, {"cpu1", ComponentKind::cpu_socket, 1}};
    for (int g = 0; g < n; ++g) s.components.push_back({"gpu" + std::to_string(g), ComponentKind::gpu, g % 2});
    for (int g = 0; g < n; ++g) s.links.push_back({2 + g, g % 2, host});
    s.links.push_back({0, 1, socket});
    for (int a = 0; a < n; ++a)
        for (int b = a + 1; b < n; ++b) s.links.push_back({2 + a, 2 + b, pair});
    return s;
}

TEST(SystemRingPacking, FourGpuNvlinkMeshFillsEveryPeerLink) {
    // HGX H100 4-GPU: 6 NVLink4 links (25 GB/s each way) to each of 3 peers, 150 x 0.816 = 122.4 GB/s per
    // pair direction. One order (0-1-2-3) uses one peer link per GPU; the six directed orders each cross
    // every directed pair link twice between them, so 75 GB/s each -> 3 x 122.4 = 367.2 GB/s per GPU:
    // the GPU's whole NVLink, as on an NVSwitch.
    const RingPacking r = pack_rings(full_mesh(4, wire("nvlink4-link", 150, 0.816)), 4);
    EXPECT_NEAR(r.bus_GBps, 367.2, 367.2 * 0.01);
    EXPECT_LE(r.bus_GBps, 367.2 + 1e-9);
    EXPECT_EQ(r.orders_used, 6);
    EXPECT_TRUE(r.nvlink_only);
    EXPECT_FALSE(r.through_nvswitch);
    EXPECT_EQ(r.links_used.size(), 6u);  // all six pair links, no PCIe
}

TEST(SystemRingPacking, EightGpuInfinityFabricMesh) {
    // MI300X platform: one xGMI link per pair, 64 GB/s x 0.75 = 48 GB/s each way; 7 peers -> 336 GB/s.
    const RingPacking r = pack_rings(full_mesh(8, wire("xgmi-link", 64, 0.75)), 8);
    EXPECT_NEAR(r.bus_GBps, 336, 336 * 0.02);
    EXPECT_LE(r.bus_GBps, 336 + 1e-9);
    EXPECT_TRUE(r.nvlink_only);
}

TEST(SystemRingPacking, MeshMatchesAnNvswitchBoardOfTheSameGpuBandwidth) {
    // The same 450 GB/s per GPU, once as a switch (composed nvlink4) and once as a 4-GPU mesh.
    const LinkSpec nvlink4{"nvlink4", 450, 2.0, 0.816};
    DeviceSpec host;
    host.name = "xeon";
    host.kind = DeviceKind::cpu;
    host.vendor = "intel";
    const SystemSpec hub = compose_system(gpu("h100-sxm"), 4, nvlink4, wire("pcie5", 64, 0.9), host, 2, wire("upi", 64, 0.8));
    const CommGroup on_hub = comm_group(hub, 4, 4);
    const CommGroup on_mesh = comm_group(full_mesh(4, wire("nvlink4-link", 150, 0.816)), 4, 4);
    EXPECT_NEAR(on_mesh.intra_bus_GBps / on_hub.intra_bus_GBps, 1.0, 0.01);
    EXPECT_TRUE(on_mesh.intra_nvlink);
    EXPECT_FALSE(on_mesh.nvswitch);
    EXPECT_TRUE(on_hub.nvswitch);
}

TEST(SystemRingPacking, EightGpuNvswitchIsOneOrderAtTheWholeLink) {
    // DGX H100-like: 8 GPUs on one NVSwitch, nvlink4 450 GB/s x 0.816 = 367.2 GB/s each way per GPU. Every order
    // crosses each GPU's switch link once each way, so all 5,040 orders tie and the first (0-1-...-7) keeps every
    // channel: the search's freshness bound must not lose it (ring_packing.cpp, WidestRing::cannot_beat).
    DeviceSpec host;
    host.name = "xeon";
    host.kind = DeviceKind::cpu;
    host.vendor = "intel";
    const SystemSpec hub = compose_system(gpu("h100-sxm"), 8, LinkSpec{"nvlink4", 450, 2.0, 0.816}, wire("pcie5", 64, 0.9),
                                          host, 2, wire("upi", 64, 0.8));
    const RingPacking r = pack_rings(hub, 8);
    EXPECT_NEAR(r.bus_GBps, 367.2, 1e-9);
    EXPECT_EQ(r.orders_used, 1);
    EXPECT_TRUE(r.nvlink_only);
    EXPECT_TRUE(r.through_nvswitch);
    EXPECT_EQ(r.links_used.size(), 8u);   // each GPU's switch link
}

TEST(SystemRingPacking, BridgedPairsAcrossSockets) {
    // R760xa-style: gpu0-gpu1 and gpu2-gpu3 NVLink-bridged (300 GB/s), pair 0/1 on cpu0, pair 2/3 on cpu1,
    // PCIe 64 x 0.9 = 57.6, UPI 4 x 32 x 0.8 = 102.4 GB/s each way. Orders 0-1-2-3 and 0-3-2-1 each
    // cross the sockets once each way on disjoint PCIe directions: together 2 x 57.6 = 115.2 > 102.4,
    // so the UPI link bounds them: 102.4 GB/s.
    SystemSpec s;
    s.name = "bridged";
    s.device = gpu("h100-pcie");
    s.devices_per_node = 4;
    s.components = {{"cpu0", ComponentKind::cpu_socket, 0}, {"cpu1", ComponentKind::cpu_socket, 1}};
    for (int g = 0; g < 4; ++g) s.components.push_back({"gpu" + std::to_string(g), ComponentKind::gpu, g / 2});
    for (int g = 0; g < 4; ++g) s.links.push_back({2 + g, g / 2, wire("pcie5", 64, 0.9)});
    s.links.push_back({0, 1, wire("upi", 128, 0.8)});
    s.links.push_back({2, 3, wire("nvlink-bridge", 300)});
    s.links.push_back({4, 5, wire("nvlink-bridge", 300)});
    const RingPacking r = pack_rings(s, 4);
    EXPECT_NEAR(r.bus_GBps, 102.4, 102.4 * 0.01);
    EXPECT_FALSE(r.nvlink_only);
    // Without bridges every order crosses PCIe at each GPU once each way: 57.6 GB/s.
    s.links.resize(5);
    EXPECT_NEAR(pack_rings(s, 4).bus_GBps, 57.6, 57.6 * 0.01);
}

TEST(SystemRingPacking, ErrorsAndTwoGpus) {
    const SystemSpec mesh = full_mesh(2, wire("nvlink4-link", 150, 0.816));
    // Two GPUs: the ring 0->1->0 uses the pair link once each way: 122.4 GB/s.
    EXPECT_NEAR(pack_rings(mesh, 2).bus_GBps, 122.4, 1e-6);
    EXPECT_THROW(pack_rings(mesh, 1), InputError);
    EXPECT_THROW(pack_rings(mesh, 3), InputError);  // no gpu2
}

// ---- NICs ----------------------------------------------------------------------------------------

TEST(SystemNicShare, GpusShareTheirClosestNic) {
    // 4 GPUs, gpu0/gpu2 on socket 0 and gpu1/gpu3 on socket 1; one NIC per socket on the CPU root ports;
    // NIC line 50 x 0.85 = 42.5 GB/s. gpu0 and gpu2 use nic0, gpu1 and gpu3 nic1: 21.25 GB/s each (the
    // root port into each NIC carries two flows: 57.6 / 2 = 28.8, more than the line share).
    SystemSpec s = full_mesh(4, wire("nvlink4-link", 150, 0.816));
    s.inter_node = {"ib-ndr-400", 50, 2, 0.85};
    s.components.push_back({"nic0", ComponentKind::nic, 0});
    s.components.push_back({"nic1", ComponentKind::nic, 1});
    const int nic0 = static_cast<int>(s.components.size()) - 2;
    s.links.push_back({nic0, 0, wire("pcie5", 64, 0.9)});
    s.links.push_back({nic0 + 1, 1, wire("pcie5", 64, 0.9)});
    const NicShare two = nic_share(s, 4);
    EXPECT_NEAR(two.per_gpu_GBps, 21.25, 1e-9);
    EXPECT_EQ(two.nic_of_gpu[0], nic0);
    EXPECT_EQ(two.nic_of_gpu[1], nic0 + 1);  // gpu1 sits on socket 1 (g % 2)
    // Two more NICs: one per GPU, each bounded by its NIC: 42.5.
    s.components.push_back({"nic2", ComponentKind::nic, 0});
    s.components.push_back({"nic3", ComponentKind::nic, 1});
    s.links.push_back({nic0 + 2, 0, wire("pcie5", 64, 0.9)});
    s.links.push_back({nic0 + 3, 1, wire("pcie5", 64, 0.9)});
    EXPECT_NEAR(nic_share(s, 4).per_gpu_GBps, 42.5, 1e-9);
    // Composed systems (no NIC components): the fabric rate per GPU.
    s.components.resize(nic0);
    s.links.resize(s.links.size() - 4);
    EXPECT_NEAR(nic_share(s, 4).per_gpu_GBps, 42.5, 1e-9);
}

}  // namespace
}  // namespace ftb
