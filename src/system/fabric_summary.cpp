#include "system/fabric_summary.hpp"

#include <fmt/format.h>

#include "system/ring_packing.hpp"

namespace ftb {

const char* to_string(FabricKind kind) {
    switch (kind) {
        case FabricKind::none: return "none";
        case FabricKind::pcie_only: return "pcie_only";
        case FabricKind::bridges: return "bridges";
        case FabricKind::mesh: return "mesh";
        case FabricKind::switched: return "switched";
    }
    return "?";
}

FabricSummary summarize_fabric(const SystemSpec& system) {
    FabricSummary f;
    const int gpus = system.cpu_only ? 0 : system.devices_per_node;
    if (gpus < 2 || system.components.empty()) return f;
    const int gpu0 = system.gpu_component(0);
    bool switched = false;
    for (const TopologyLink& l : system.links) {
        const ComponentKind ka = system.components[l.a].kind, kb = system.components[l.b].kind;
        const bool gpu_gpu = ka == ComponentKind::gpu && kb == ComponentKind::gpu;
        const bool gpu_switch = (ka == ComponentKind::gpu && kb == ComponentKind::nvswitch) ||
                                (kb == ComponentKind::gpu && ka == ComponentKind::nvswitch);
        if (gpu_gpu) {
            ++f.direct_pairs;
            f.per_pair_GBps = l.link.bandwidth_GBps;
        }
        if (!(gpu_gpu || gpu_switch) || (l.a != gpu0 && l.b != gpu0)) continue;
        switched = switched || gpu_switch;
        f.link = l.link.name;
        f.per_gpu_GBps += l.link.bandwidth_GBps;
    }
    if (switched) f.kind = FabricKind::switched;
    else if (f.direct_pairs == gpus * (gpus - 1) / 2) f.kind = FabricKind::mesh;
    else if (f.direct_pairs > 0) f.kind = FabricKind::bridges;
    else f.kind = FabricKind::pcie_only;
    f.ring_bus_GBps = pack_rings(system, gpus).bus_GBps;
    return f;
}

std::string FabricSummary::text() const {
    switch (kind) {
        case FabricKind::none: return "none";
        case FabricKind::pcie_only: return "PCIe only";
        case FabricKind::bridges:
            return fmt::format("{} bridged pair{}, {} {:.0f} GB/s", direct_pairs, direct_pairs == 1 ? "" : "s", link,
                               per_pair_GBps);
        case FabricKind::mesh:
            return fmt::format("full mesh, {} {:.0f} GB/s per pair ({:.0f} per GPU)", link, per_pair_GBps, per_gpu_GBps);
        case FabricKind::switched: return fmt::format("NVSwitch, {} {:.0f} GB/s per GPU", link, per_gpu_GBps);
    }
    return "?";
}

}  // namespace ftb
