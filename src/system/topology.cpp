#include "system/topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>

#include "ftbound/error.hpp"

namespace ftb {

namespace {

bool may_transit(ComponentKind kind) {
    return kind == ComponentKind::cpu_socket || kind == ComponentKind::pcie_switch ||
           kind == ComponentKind::nvswitch;
}

double achievable_GBps(const LinkSpec& link) {
    return link.bandwidth_GBps * link.achievable_fraction;
}

}  // namespace

bool is_nvlink(const LinkSpec& link) {
    return link.name.rfind("nvlink", 0) == 0;
}

Topology::Topology(const SystemSpec& system) : system_(&system), adjacency_(system.components.size()) {
    const int n = component_count();
    for (int i = 0; i < static_cast<int>(system.links.size()); ++i) {
        const TopologyLink& l = system.links[i];
        const std::string field = "links[" + std::to_string(i) + "]";
        if (l.a < 0 || l.a >= n || l.b < 0 || l.b >= n || l.a == l.b)
            throw InputError(system.name, field, "link must join two different components");
        if (!(l.link.bandwidth_GBps > 0))
            throw InputError(system.name, field + ".bandwidth_GBps", "must be > 0");
        if (!(l.link.achievable_fraction > 0 && l.link.achievable_fraction <= 1))
            throw InputError(system.name, field + ".achievable_fraction", "must be in (0, 1]");
        adjacency_[l.a].push_back({l.b, i});
        adjacency_[l.b].push_back({l.a, i});
    }
}

int Topology::component(std::string_view id) const {
    for (int i = 0; i < component_count(); ++i)
        if (system_->components[i].id == id) return i;
    return -1;
}

int Topology::gpu(int local_rank) const {
    return component("gpu" + std::to_string(local_rank));
}

int Topology::host_memory(int socket) const {
    for (int i = 0; i < component_count(); ++i) {
        const Component& c = system_->components[i];
        if (c.kind == ComponentKind::cpu_socket && c.socket == socket) return i;
    }
    return -1;
}

int Topology::nvme(int index) const {
    for (int i = 0; i < component_count(); ++i)
        if (system_->components[i].kind == ComponentKind::nvme && index-- == 0) return i;
    return -1;
}

int Topology::host_memory_near(int c) const {
    if (c < 0 || c >= component_count()) return -1;
    const int near = host_memory(system_->components[c].socket);
    return near >= 0 ? near : host_memory(0);
}

double Topology::capacity_GBps(LinkDirection d) const {
    // Both directions of a link have the same per-direction bandwidth (LinkSpec is per direction).
    return achievable_GBps(system_->links.at(d.link).link);
}

Route Topology::route(int from, int to) const {
    std::optional<Route> r = find_route(from, to);
    if (!r)
        throw InputError(system_->name, "links",
                         "no path from " + system_->components[from].id + " to " + system_->components[to].id);
    return *r;
}

std::optional<Route> Topology::find_route(int from, int to) const {
    const int n = component_count();
    if (from < 0 || from >= n || to < 0 || to >= n)
        throw InputError(system_->name, "components", "route endpoint does not exist");
    Route r;
    r.from = from;
    r.to = to;
    if (from == to) {
        r.components = {from};
        r.bottleneck_GBps = std::numeric_limits<double>::infinity();
        return r;
    }
    // BFS by layers keeps hop count minimal; within a layer keep the widest predecessor.
    constexpr int kUnseen = -1;
    std::vector<int> depth(n, kUnseen), pred(n, -1), pred_link(n, -1);
    std::vector<double> width(n, 0);
    depth[from] = 0;
    width[from] = std::numeric_limits<double>::infinity();
    std::deque<int> queue{from};
    while (!queue.empty()) {
        const int u = queue.front();
        queue.pop_front();
        if (u == to) break;
        if (u != from && !may_transit(system_->components[u].kind)) continue;
        for (auto [v, link] : adjacency_[u]) {
            const double w = std::min(width[u], achievable_GBps(system_->links[link].link));
            if (depth[v] == kUnseen) {
                depth[v] = depth[u] + 1;
                width[v] = w;
                pred[v] = u;
                pred_link[v] = link;
                queue.push_back(v);
            } else if (depth[v] == depth[u] + 1 && w > width[v]) {
                width[v] = w;
                pred[v] = u;
                pred_link[v] = link;
            }
        }
    }
    if (depth[to] == kUnseen) return std::nullopt;
    for (int v = to; v != from; v = pred[v]) {
        const int link = pred_link[v];
        r.components.push_back(v);
        r.hops.push_back({link, system_->links[link].a == pred[v]});
        r.latency_us += system_->links[link].link.latency_us;
    }
    r.components.push_back(from);
    std::reverse(r.components.begin(), r.components.end());
    std::reverse(r.hops.begin(), r.hops.end());
    r.bottleneck_GBps = width[to];
    return r;
}

namespace {

int direction_index(LinkDirection d) { return 2 * d.link + (d.a_to_b ? 0 : 1); }

struct FairShare {
    std::vector<double> rate_Bps;       // per flow; 0 for inactive flows
    std::vector<int> bound_direction;   // per flow: the direction that froze it (direction_index), -1 if inactive
};

// Max-min fair rates of the active flows by progressive filling: repeatedly saturate the link direction with
// the smallest fair share and freeze the flows that cross it.
FairShare max_min_rates(const Topology& topology, const std::vector<FlowResult>& results,
                        const std::vector<bool>& active) {
    const int n_flows = static_cast<int>(results.size());
    const int n_dirs = 2 * static_cast<int>(topology.system().links.size());
    std::vector<double> capacity_left(n_dirs);
    for (int d = 0; d < n_dirs; ++d) capacity_left[d] = topology.capacity_GBps({d / 2, d % 2 == 0}) * 1e9;
    std::vector<int> unfrozen_on(n_dirs, 0);
    std::vector<bool> frozen(n_flows);
    FairShare out{std::vector<double>(n_flows, 0), std::vector<int>(n_flows, -1)};
    for (int f = 0; f < n_flows; ++f) {
        frozen[f] = !active[f];
        if (active[f])
            for (const auto& hop : results[f].route.hops) ++unfrozen_on[direction_index(hop)];
    }
    for (;;) {
        int tightest = -1;
        double share = std::numeric_limits<double>::infinity();
        for (int d = 0; d < n_dirs; ++d) {
            if (unfrozen_on[d] == 0) continue;
            const double s = capacity_left[d] / unfrozen_on[d];
            if (s < share) share = s, tightest = d;
        }
        if (tightest < 0) return out;
        for (int f = 0; f < n_flows; ++f) {
            if (frozen[f]) continue;
            const auto& hops = results[f].route.hops;
            if (std::none_of(hops.begin(), hops.end(), [&](LinkDirection h) { return direction_index(h) == tightest; }))
                continue;
            frozen[f] = true;
            out.rate_Bps[f] = share;
            out.bound_direction[f] = tightest;
            for (const auto& hop : hops) {
                capacity_left[direction_index(hop)] -= share;
                --unfrozen_on[direction_index(hop)];
            }
        }
    }
}

}  // namespace

std::vector<FlowResult> share_links(const Topology& topology, const std::vector<Flow>& flows) {
    const int n_flows = static_cast<int>(flows.size());
    std::vector<FlowResult> results(n_flows);
    std::vector<double> remaining_bytes(n_flows);
    for (int f = 0; f < n_flows; ++f) {
        if (!(flows[f].bytes >= 0))
            throw InputError(topology.system().name, "flows[" + std::to_string(f) + "].bytes", "must be >= 0");
        results[f].route = topology.route(flows[f].from, flows[f].to);
        remaining_bytes[f] = flows[f].bytes;
    }
    std::vector<bool> active(n_flows);
    for (int f = 0; f < n_flows; ++f) active[f] = remaining_bytes[f] > 0 && !results[f].route.hops.empty();

    double now_seconds = 0;
    bool first_round = true;
    while (std::find(active.begin(), active.end(), true) != active.end()) {
        const FairShare fair = max_min_rates(topology, results, active);
        if (first_round)
            for (int f = 0; f < n_flows; ++f) {
                if (!active[f]) continue;
                results[f].initial_rate_GBps = fair.rate_Bps[f] / 1e9;
                results[f].bound_by = {fair.bound_direction[f] / 2, fair.bound_direction[f] % 2 == 0};
            }
        first_round = false;
        // Advance to the next completion; the survivors get the freed bandwidth next round.
        double step_seconds = std::numeric_limits<double>::infinity();
        for (int f = 0; f < n_flows; ++f)
            if (active[f]) step_seconds = std::min(step_seconds, remaining_bytes[f] / fair.rate_Bps[f]);
        now_seconds += step_seconds;
        for (int f = 0; f < n_flows; ++f) {
            if (!active[f]) continue;
            remaining_bytes[f] -= fair.rate_Bps[f] * step_seconds;
            if (remaining_bytes[f] <= flows[f].bytes * 1e-12) {
                active[f] = false;
                results[f].seconds = now_seconds;
            }
        }
    }
    for (auto& r : results) r.seconds += r.route.latency_us * 1e-6;
    return results;
}

SystemSpec compose_system(const DeviceSpec& gpu, int gpus_per_node, const LinkSpec& intra,
                          const LinkSpec& host_link, const DeviceSpec& host_cpu, int sockets,
                          const LinkSpec& socket_link) {
    const std::string file;  // composed from the job file's hardware section
    if (gpus_per_node < 1) throw InputError(file, "hardware.gpus_per_node", "must be >= 1");
    if (sockets < 1) throw InputError(file, "hardware.host.sockets", "must be >= 1");
    if (!(host_link.bandwidth_GBps > 0)) throw InputError(file, "hardware.gpu.host_link", "bandwidth must be > 0");
    if (sockets > 1 && !(socket_link.bandwidth_GBps > 0))
        throw InputError(file, "hardware.host.socket_link", "bandwidth must be > 0");
    const bool nvlink = is_nvlink(intra) && intra.bandwidth_GBps > 0;
    const bool xgmi = intra.name.rfind("xgmi", 0) == 0 && intra.bandwidth_GBps > 0;

    SystemSpec s;
    s.name = "composed: " + std::to_string(gpus_per_node) + "x " + gpu.name + " over " +
             (intra.name.empty() ? std::string("inline link") : intra.name);
    s.vendor = gpu.vendor;
    s.device = gpu;
    s.devices_per_node = gpus_per_node;
    s.host_cpu = host_cpu;
    s.sockets = sockets;
    for (int c = 0; c < sockets; ++c)
        s.components.push_back({"cpu" + std::to_string(c), ComponentKind::cpu_socket, c});
    const int first_gpu = static_cast<int>(s.components.size());
    for (int g = 0; g < gpus_per_node; ++g)
        s.components.push_back({"gpu" + std::to_string(g), ComponentKind::gpu, g % sockets});
    for (int g = 0; g < gpus_per_node; ++g) s.links.push_back({first_gpu + g, g % sockets, host_link});
    for (int a = 0; a < sockets; ++a)
        for (int b = a + 1; b < sockets; ++b) s.links.push_back({a, b, socket_link});
    if (nvlink) {
        const int hub = static_cast<int>(s.components.size());
        s.components.push_back({"nvs", ComponentKind::nvswitch, 0});
        for (int g = 0; g < gpus_per_node; ++g) s.links.push_back({first_gpu + g, hub, intra});
    } else if (xgmi && gpus_per_node > 1) {
        LinkSpec pair = intra;
        pair.bandwidth_GBps = intra.bandwidth_GBps / (gpus_per_node - 1);
        for (int a = 0; a < gpus_per_node; ++a)
            for (int b = a + 1; b < gpus_per_node; ++b) s.links.push_back({first_gpu + a, first_gpu + b, pair});
    }
    s.sources.push_back("composed by ftbound from the job's hardware section (src/system/topology.cpp)");
    return s;
}

}  // namespace ftb
