// Reading the machine from Linux's /proc and /sys. Every reader takes the root it reads under
// ("/" on a real machine, a fixture tree such as tests/data/sysfs/<case>/ in tests).
#pragma once
#include <string>
#include <vector>

#include "probe/probe_types.hpp"

namespace ftb::probe {

// "16.0 GT/s PCIe" -> 4; "2.5 GT/s" -> 1; unreadable or "Unknown" -> 0.
int pcie_gen_from_speed(const std::string& speed_text);

// Theoretical per-direction bandwidth of a PCIe link in GB/s, from the PCIe base specification's
// signalling rates and encodings: gen1 2.5 GT/s and gen2 5 GT/s use 8b/10b, gen3 8, gen4 16 and
// gen5 32 GT/s use 128b/130b, gen6 64 GT/s uses FLIT mode (242 of every 256 bytes carry TLP/DLLP bytes,
// the rest is CRC and FEC).
double pcie_link_GBps(int gen, int width);

// PCI functions under ROOT/sys/bus/pci/devices, sorted by address.
std::vector<PciDevice> read_pci_devices(const std::string& root);

// CPU model, sockets, cores, NUMA nodes, memory, from ROOT/proc/cpuinfo, ROOT/proc/meminfo and
// ROOT/sys/devices/system/{cpu,node}.
HostInfo read_host_info(const std::string& root);

// Warnings about the PCIe devices that matter to training (GPUs, NICs, NVMe drives): links trained
// below their maximum (for GPUs, the width only: their rate drops at idle), and GPUs without a NIC
// on their NUMA node.
std::vector<std::string> pcie_warnings(const std::vector<PciDevice>& devices);

std::string pci_class_name(const PciDevice& d);  // "gpu", "nic", "nvme" or "other"

}  // namespace ftb::probe
