#include "system/storage_path.hpp"

#include <algorithm>
#include <set>

#include "system/topology.hpp"

namespace ftb {

NvmeWrite nvme_array_write(const SystemSpec& system) {
    NvmeWrite out;
    out.write_GBps = system.local_storage.write_GBps;
    const Topology topo(system);
    std::vector<int> drives, sockets;
    for (int c = 0; c < topo.component_count(); ++c) {
        if (system.components[c].kind == ComponentKind::nvme) drives.push_back(c);
        if (system.components[c].kind == ComponentKind::cpu_socket) sockets.push_back(c);
    }
    if (drives.empty() || sockets.empty() || !(out.write_GBps > 0)) return out;
    const double total_bytes = 1e12;  // any size: the rate is what matters
    const double per_flow = total_bytes / double(drives.size() * sockets.size());
    std::vector<Flow> flows;
    for (int s : sockets)
        for (int d : drives) flows.push_back({s, d, per_flow});
    double links_seconds = 0;
    std::set<int> links;
    for (const FlowResult& r : share_links(topo, flows)) {
        links_seconds = std::max(links_seconds, r.seconds);
        for (const LinkDirection& hop : r.route.hops) links.insert(hop.link);
    }
    const double drives_seconds = total_bytes / (out.write_GBps * 1e9);
    out.write_GBps = total_bytes / std::max(links_seconds, drives_seconds) / 1e9;
    out.links_used.assign(links.begin(), links.end());
    return out;
}

}  // namespace ftb
