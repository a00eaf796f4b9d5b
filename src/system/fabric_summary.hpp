// What a buyer needs to know about a node's GPU-to-GPU fabric, read off its topology: switched
// (NVSwitch), a full mesh of direct links (4-GPU HGX, MI300X Infinity Fabric), bridges between some
// pairs (NVLink bridges on PCIe cards), or PCIe only; and the ring bandwidth NCCL gets from it.
#pragma once
#include <string>

#include "ftbound/system_spec.hpp"

namespace ftb {

enum class FabricKind { none, pcie_only, bridges, mesh, switched };

struct FabricSummary {
    FabricKind kind = FabricKind::none;
    std::string link;                 // the GPU-to-GPU (or GPU-to-switch) link, e.g. "nvlink4", "xgmi-link"
    double per_gpu_GBps = 0;          // one GPU's fabric links together, per direction, peak
    double per_pair_GBps = 0;         // a direct pair's links, per direction, peak (mesh, bridges)
    int direct_pairs = 0;             // GPU pairs joined by a direct link
    double ring_bus_GBps = 0;         // all GPUs of the node in NCCL rings (pack_rings), achievable

    std::string text() const;         // e.g. "NVSwitch, nvlink4 450 GB/s per GPU"
};

// A CPU-only system (or one GPU) has kind none and no ring.
FabricSummary summarize_fabric(const SystemSpec& system);

const char* to_string(FabricKind kind);

}  // namespace ftb
