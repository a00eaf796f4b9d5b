#include "system/nic_share.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "ftbound/error.hpp"
#include "system/topology.hpp"

namespace ftb {
namespace {

std::vector<int> nic_components(const SystemSpec& system) {
    std::vector<int> nics;
    for (int c = 0; c < static_cast<int>(system.components.size()); ++c)
        if (system.components[c].kind == ComponentKind::nic) nics.push_back(c);
    return nics;
}

// The closest NIC (fewest hops, then widest path), spreading GPUs over equally close NICs.
int closest_nic(const Topology& topo, int gpu, const std::vector<int>& nics, const std::vector<int>& users) {
    int best = -1;
    size_t best_hops = std::numeric_limits<size_t>::max();
    double best_width = 0;
    int best_users = 0;
    for (size_t k = 0; k < nics.size(); ++k) {
        const std::optional<Route> found = topo.find_route(gpu, nics[k]);
        if (!found) continue;  // a NIC of another host (rack-scale systems)
        const Route& r = *found;
        const bool closer = r.hops.size() < best_hops;
        const bool same_distance = r.hops.size() == best_hops;
        const bool wider = same_distance && r.bottleneck_GBps > best_width * (1 + 1e-12);
        const bool as_wide = same_distance && !wider && r.bottleneck_GBps >= best_width * (1 - 1e-12);
        if (closer || wider || (as_wide && users[k] < best_users)) {
            best = static_cast<int>(k);
            best_hops = r.hops.size();
            best_width = r.bottleneck_GBps;
            best_users = users[k];
        }
    }
    return best;
}

}  // namespace

NicShare nic_share(const SystemSpec& system, int gpus) {
    const double line_GBps = system.inter_node.bandwidth_GBps * system.inter_node.achievable_fraction;
    NicShare out;
    const std::vector<int> nics = nic_components(system);
    if (nics.empty() || gpus < 1) {
        out.per_gpu_GBps = line_GBps;
        return out;
    }
    const Topology topo(system);
    std::vector<int> users(nics.size(), 0);
    std::vector<Flow> flows;
    std::vector<int> nic_index;
    for (int g = 0; g < gpus; ++g) {
        const int gc = topo.gpu(g);
        if (gc < 0)
            throw InputError(system.name, "components", "no component gpu" + std::to_string(g) + " to send to the network");
        const int k = closest_nic(topo, gc, nics, users);
        if (k < 0) throw InputError(system.name, "components", "gpu" + std::to_string(g) + " reaches no NIC");
        ++users[k];
        nic_index.push_back(k);
        out.nic_of_gpu.push_back(nics[k]);
        flows.push_back({gc, nics[k], 1e9});  // any equal size: only the shares matter
    }
    // The PCIe paths to the NICs, all GPUs at once; then each NIC's line rate split among its GPUs.
    const std::vector<FlowResult> shares = share_links(topo, flows);
    out.per_gpu_GBps = std::numeric_limits<double>::infinity();
    std::set<int> links;
    for (int g = 0; g < gpus; ++g) {
        const double line_share = line_GBps / users[nic_index[g]];
        out.per_gpu_GBps = std::min({out.per_gpu_GBps, shares[g].initial_rate_GBps, line_share});
        for (const LinkDirection& hop : shares[g].route.hops) links.insert(hop.link);
    }
    out.links_used.assign(links.begin(), links.end());
    return out;
}

}  // namespace ftb
