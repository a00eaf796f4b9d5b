#include "report/systems_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/table.hpp"
#include "system/fabric_summary.hpp"
#include "system/nic_share.hpp"

namespace ftb {
namespace {

const char* component_kind(ComponentKind k) {
    switch (k) {
        case ComponentKind::gpu: return "gpu";
        case ComponentKind::cpu_socket: return "cpu_socket";
        case ComponentKind::pcie_switch: return "pcie_switch";
        case ComponentKind::nic: return "nic";
        case ComponentKind::nvswitch: return "nvswitch";
        case ComponentKind::nvme: return "nvme";
    }
    return "?";
}

int count_of(const SystemSpec& x, ComponentKind kind) {
    return static_cast<int>(std::count_if(x.components.begin(), x.components.end(),
                                          [&](const Component& c) { return c.kind == kind; }));
}

// The whole node at full load: every compute device at its TDP plus everything else (node_base_power_w).
double max_node_w(const SystemSpec& x) { return x.devices_per_node * x.device.tdp_w + x.node_base_power_w; }

nlohmann::ordered_json topology_json(const SystemSpec& x) {
    nlohmann::ordered_json comps = nlohmann::ordered_json::array(), links = nlohmann::ordered_json::array();
    for (const Component& c : x.components) comps.push_back({{"id", c.id}, {"kind", component_kind(c.kind)}, {"socket", c.socket}});
    for (const TopologyLink& l : x.links)
        links.push_back({{"a", x.components[l.a].id}, {"b", x.components[l.b].id}, {"link", l.link.name},
                         {"bandwidth_GBps", l.link.bandwidth_GBps}, {"achievable_fraction", l.link.achievable_fraction},
                         {"latency_us", l.link.latency_us}});
    return {{"components", comps}, {"links", links}};
}

}  // namespace

std::string systems_section(const Catalog& cat, nlohmann::ordered_json& js) {
    const InputSite site{"catalog", "systems"};
    TextTable t({"name", "compute", "GPU fabric", "ring GB/s", "NICs", "power supplies", "max W"},
                {false, false, false, true, false, false, true});
    for (const auto& n : cat.names("systems")) {
        const SystemSpec x = cat.system(n, site);
        const FabricSummary fabric = summarize_fabric(x);
        const int nics = count_of(x, ComponentKind::nic);
        const NicShare share = nic_share(x, x.cpu_only ? 0 : x.devices_per_node);
        const std::string compute = x.cpu_only ? fmt::format("CPU only: {} x {}", x.sockets, x.host_cpu.name)
                                               : fmt::format("{} x {}", x.devices_per_node, x.device.name);
        const std::string nic_text =
            nics == 0 ? "-"
                      : x.cpu_only ? fmt::format("{} x {}", nics, x.inter_node.name)
                                   : fmt::format("{} x {} ({:.0f} GB/s per GPU)", nics, x.inter_node.name, share.per_gpu_GBps);
        t.add({n, compute, fabric.text(), fabric.ring_bus_GBps > 0 ? fmt::format("{:.0f}", fabric.ring_bus_GBps) : "-", nic_text,
               fmt::format("{} x {:.0f} W {}", x.power.count, x.power.watts_each, x.power.redundancy),
               fmt::format("{:.0f}", max_node_w(x))});
        js.push_back({{"name", n}, {"vendor", x.vendor}, {"form_factor", x.form_factor}, {"cpu_only", x.cpu_only},
                      {"gpu", x.cpu_only ? "" : x.device.name}, {"gpus_per_node", x.devices_per_node}, {"cpu", x.host_cpu.name},
                      {"sockets", x.sockets}, {"host_memory_bytes", x.host_memory_bytes},
                      {"fabric", {{"kind", to_string(fabric.kind)}, {"link", fabric.link}, {"per_gpu_GBps", fabric.per_gpu_GBps},
                                  {"per_pair_GBps", fabric.per_pair_GBps}, {"ring_bus_GBps", fabric.ring_bus_GBps}}},
                      {"nics", {{"count", nics}, {"network", x.inter_node.name}, {"line_GBps", x.inter_node.bandwidth_GBps},
                                {"per_gpu_GBps", x.cpu_only ? 0.0 : share.per_gpu_GBps}}},
                      {"power", {{"psu_count", x.power.count}, {"psu_watts", x.power.watts_each},
                                 {"redundancy", x.power.redundancy}, {"node_base_power_w", x.node_base_power_w},
                                 {"max_node_w", max_node_w(x)}}},
                      {"storage", {{"nvme_drives", count_of(x, ComponentKind::nvme)}, {"read_GBps", x.local_storage.read_GBps},
                                   {"write_GBps", x.local_storage.write_GBps}}},
                      {"topology", topology_json(x)}, {"sources", x.sources}});
    }
    return t.str("  ");
}

}  // namespace ftb
