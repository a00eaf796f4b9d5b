// sysfs readers and the PCIe link check, on the fixture trees in tests/data/sysfs (see its README).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "probe/sysfs.hpp"
#include "test_paths.hpp"

using namespace ftb::probe;

namespace {
const std::string kServer = std::string(ftb_test::test_data()) + "/sysfs/gpu-server";
const std::string kVm = std::string(ftb_test::test_data()) + "/sysfs/cpu-vm";

const PciDevice& by_address(const std::vector<PciDevice>& devs, const std::string& addr) {
    auto it = std::find_if(devs.begin(), devs.end(), [&](auto& d) { return d.address == addr; });
    if (it == devs.end()) throw std::runtime_error("no device " + addr);
    return *it;
}
}  // namespace

TEST(ProbeSysfs, LinkSpeedToGeneration) {
    EXPECT_EQ(pcie_gen_from_speed("2.5 GT/s PCIe"), 1);
    EXPECT_EQ(pcie_gen_from_speed("5.0 GT/s PCIe"), 2);
    EXPECT_EQ(pcie_gen_from_speed("8.0 GT/s PCIe"), 3);
    EXPECT_EQ(pcie_gen_from_speed("8 GT/s"), 3);
    EXPECT_EQ(pcie_gen_from_speed("16.0 GT/s PCIe"), 4);
    EXPECT_EQ(pcie_gen_from_speed("32.0 GT/s PCIe"), 5);
    EXPECT_EQ(pcie_gen_from_speed("64.0 GT/s PCIe"), 6);
    EXPECT_EQ(pcie_gen_from_speed("Unknown"), 0);
    EXPECT_EQ(pcie_gen_from_speed(""), 0);
}

TEST(ProbeSysfs, LinkBandwidthFromSpecRates) {
    // gen5 x16: 32 GT/s * 128/130 * 16 lanes / 8 bits = 63.015 GB/s per direction.
    EXPECT_NEAR(pcie_link_GBps(5, 16), 63.015, 1e-3);
    // gen4 x16: 31.508; gen3 x4: 8 * 128/130 * 4 / 8 = 3.938; gen1 x1: 2.5 * 0.8 / 8 = 0.25.
    EXPECT_NEAR(pcie_link_GBps(4, 16), 31.508, 1e-3);
    EXPECT_NEAR(pcie_link_GBps(3, 4), 3.938, 1e-3);
    EXPECT_NEAR(pcie_link_GBps(1, 1), 0.25, 1e-9);
    EXPECT_EQ(pcie_link_GBps(0, 16), 0);
}

TEST(ProbeSysfs, ReadsPciDevicesOfFixture) {
    auto devs = read_pci_devices(kServer);
    ASSERT_EQ(devs.size(), 7u);
    EXPECT_EQ(devs.front().address, "0000:00:00.0");  // sorted
    const auto& gpu = by_address(devs, "0000:b1:00.0");
    EXPECT_TRUE(gpu.is_gpu());
    EXPECT_EQ(gpu.vendor_id, 0x10de);
    EXPECT_EQ(gpu.device_id, 0x2335);
    EXPECT_EQ(gpu.numa_node, 1);
    EXPECT_EQ(gpu.link_gen, 5);
    EXPECT_EQ(gpu.link_width, 8);
    EXPECT_EQ(gpu.max_link_width, 16);
    EXPECT_TRUE(gpu.link_downtrained());
    EXPECT_FALSE(by_address(devs, "0000:02:00.0").is_gpu());  // BMC VGA
    EXPECT_TRUE(by_address(devs, "0000:18:00.0").is_nic());
    EXPECT_TRUE(by_address(devs, "0000:c1:00.0").is_nvme());
    EXPECT_FALSE(by_address(devs, "0000:17:00.0").link_downtrained());
    EXPECT_EQ(by_address(devs, "0000:00:00.0").max_link_gen, 0);  // no link files
}

TEST(ProbeSysfs, WarnsOnDowntrainedLinksAndRemoteGpus) {
    auto warnings = pcie_warnings(read_pci_devices(kServer));
    auto count = [&](const std::string& needle) {
        return std::count_if(warnings.begin(), warnings.end(), [&](auto& w) { return w.find(needle) != std::string::npos; });
    };
    ASSERT_EQ(warnings.size(), 3u) << ::testing::PrintToString(warnings);
    EXPECT_EQ(count("0000:b1:00.0 link trained down to gen5 x8 (device supports gen5 x16)"), 1);
    EXPECT_EQ(count("numa: gpu 0000:b1:00.0 is on NUMA node 1 with no NIC"), 1);
    EXPECT_EQ(count("nvme 0000:c1:00.0 link trained down to gen3 x4 (device supports gen4 x4)"), 1);
    EXPECT_EQ(count("0000:31:00.0"), 0);  // idle GPU at 2.5 GT/s is power saving, not a fault
}

TEST(ProbeSysfs, ReadsHostTopologyOfFixture) {
    HostInfo h = read_host_info(kServer);
    EXPECT_EQ(h.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
    EXPECT_EQ(h.vendor, "intel");
    EXPECT_EQ(h.sockets, 2);
    EXPECT_EQ(h.cores, 4);
    EXPECT_EQ(h.logical_cpus, 8);
    EXPECT_EQ(h.numa_nodes, 2);
    EXPECT_DOUBLE_EQ(h.memory_bytes, 2113442816.0 * 1024);
    EXPECT_DOUBLE_EQ(h.max_ghz, 3.8);
    EXPECT_TRUE(h.has_avx512_bf16);
    EXPECT_TRUE(h.has_amx_bf16);
    ASSERT_EQ(h.numa_node_socket.size(), 2u);
    EXPECT_EQ(h.numa_node_socket[0], 0);
    EXPECT_EQ(h.numa_node_socket[1], 1);
}

TEST(ProbeSysfs, SmallVirtualMachine) {
    HostInfo h = read_host_info(kVm);
    EXPECT_EQ(h.vendor, "amd");
    EXPECT_EQ(h.sockets, 1);
    EXPECT_EQ(h.cores, 1);
    EXPECT_EQ(h.logical_cpus, 2);
    EXPECT_EQ(h.numa_nodes, 1);
    EXPECT_FALSE(h.has_avx512_bf16);
    auto devs = read_pci_devices(kVm);
    ASSERT_EQ(devs.size(), 2u);
    const auto& nic = by_address(devs, "0000:00:03.0");
    EXPECT_TRUE(nic.is_nic());
    EXPECT_EQ(nic.link_width, 0);  // 255 = no link
    EXPECT_EQ(nic.max_link_gen, 0);
    EXPECT_TRUE(pcie_warnings(devs).empty());
}

TEST(ProbeSysfs, MissingRootGivesEmptyResults) {
    EXPECT_TRUE(read_pci_devices("/nonexistent-ftbound-root").empty());
    HostInfo h = read_host_info("/nonexistent-ftbound-root");
    EXPECT_EQ(h.sockets, 0);
    EXPECT_EQ(h.memory_bytes, 0);
}
