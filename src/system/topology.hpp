// Routing over a SystemSpec's component/link graph, and concurrent flows sharing links
// (DESIGN.md §4 "transfers"). Each TopologyLink is two independent directions, each with
// bandwidth_GBps x achievable_fraction. Flows that cross the same direction of a link share it
// max-min fairly (progressive filling); when a flow finishes, the others speed up.
//
// Build a Topology once per system; routes are computed on demand (BFS, small graphs). Not meant for
// the per-plan hot path: precompute routes and shares there.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "ftbound/system_spec.hpp"

namespace ftb {

// One direction of one SystemSpec link: link index and whether traffic goes from `a` to `b`.
struct LinkDirection {
    int link = -1;        // index into SystemSpec::links; -1 = none
    bool a_to_b = true;
    bool operator==(const LinkDirection&) const = default;
};

struct Route {
    int from = -1, to = -1;                // component indices
    std::vector<int> components;           // from ... to, inclusive
    std::vector<LinkDirection> hops;       // one per hop
    double bottleneck_GBps = 0;            // min achievable bandwidth over the hops
    double latency_us = 0;                 // sum of the links' latencies
};

class Topology {
public:
    explicit Topology(const SystemSpec& system);

    const SystemSpec& system() const { return *system_; }
    int component_count() const { return static_cast<int>(system_->components.size()); }
    int component(std::string_view id) const;          // index, -1 if no such id
    int gpu(int local_rank) const;                      // component "gpu<rank>", -1 if none
    int host_memory(int socket) const;                  // the cpu_socket component of `socket`, -1 if none
    int nvme(int index = 0) const;                      // the index-th nvme component, -1 if none
    int host_memory_near(int component) const;          // host memory of the component's socket

    // Achievable bandwidth of one direction of a link, GB/s (bandwidth_GBps x achievable_fraction).
    double capacity_GBps(LinkDirection d) const;

    // Fewest hops; among equal hop counts the widest path (largest bottleneck), then the first found.
    // GPUs, NICs and NVMe drives are endpoints only: traffic never transits them.
    // Throws InputError when `to` is unreachable from `from`.
    Route route(int from, int to) const;
    // The same, or nothing when `to` cannot be reached.
    std::optional<Route> find_route(int from, int to) const;

private:
    const SystemSpec* system_;
    std::vector<std::vector<std::pair<int, int>>> adjacency_;  // component -> (neighbour, link index)
};

// A transfer between two components (e.g. gpu -> cpu_socket for an optimizer-state offload).
struct Flow {
    int from = -1;
    int to = -1;
    double bytes = 0;
};

struct FlowResult {
    double seconds = 0;            // finish time from a common start, including the route latency
    double initial_rate_GBps = 0;  // the max-min share when all flows are running
    LinkDirection bound_by;        // the saturated link direction that set the initial share
    Route route;
};

// Max-min fair sharing of link directions by concurrent flows, simulated to completion.
// E.g. four GPUs offloading through one PCIe switch uplink each get a quarter of it.
std::vector<FlowResult> share_links(const Topology& topology, const std::vector<Flow>& flows);

// A synthetic one-node topology for a job that names a GPU, a count and an intra-node link instead of
// a catalog system (CONTRACT.md `hardware:` compose form):
//  - intra named nvlink*: an NVSwitch hub "nvs"; every GPU joins it with `intra` (the per-GPU NVLink
//    bandwidth, so GPU-GPU traffic is bounded by one GPU's NVLink);
//  - intra named xgmi*: a full mesh; each GPU pair gets intra.bandwidth / (gpus - 1) (AMD Infinity
//    Fabric splits a GPU's links among its peers);
//  - anything else (pcie*, none, ...): no GPU-GPU wire; GPU-GPU traffic crosses the host bridge.
// In every case GPU i hangs off socket i % sockets through `host_link`, and sockets are joined pairwise
// by `socket_link`. Components: cpu0..cpuS-1 (cpu_socket), gpu0..gpuN-1, and "nvs" for NVLink.
// Composed systems have no NIC or NVMe components: add them if a job needs those routes.
SystemSpec compose_system(const DeviceSpec& gpu, int gpus_per_node, const LinkSpec& intra,
                          const LinkSpec& host_link, const DeviceSpec& host_cpu, int sockets,
                          const LinkSpec& socket_link);

bool is_nvlink(const LinkSpec& link);  // name starts with "nvlink" (nvlink2..5, nvlink-c2c, bridges)

}  // namespace ftb
