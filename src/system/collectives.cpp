#include "system/collectives.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "system/nic_share.hpp"
#include "system/ring_packing.hpp"

namespace ftb {

namespace {

// ---- NCCL's tuning constants -------------------------------------------------------------------
// Source: NVIDIA/nccl v2.28.3-1, src/graph/tuning.cc, ncclTunerConstantsDefaults and
// ncclTopoTuneModel (read from the mirror github.com/zhanglin496/nccl-2.28.3-1). Latencies in us.
// Index order: protocol LL, LL128, Simple.
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr double kBaseLatRing_us[3] = {6.6, 14.0, 8.4};
constexpr double kBaseLatTree_us[3] = {6.8, 14.0, 8.4};
// hwLatencies: per step, by hardware class.
constexpr double kHwLatRingNvlink_us[3] = {0.6, 1.9, 3.4};
constexpr double kHwLatRingPci_us[3] = {1.0, 2.5, 5.7};
constexpr double kHwLatRingNet_us[3] = {2.7, 4.0, 14.0};
constexpr double kHwLatTreeNvlink_us[3] = {0.6, 1.25, 4.0};
constexpr double kHwLatTreePci_us[3] = {1.0, 1.9, 4.0};
constexpr double kHwLatTreeNet_us[3] = {5.0, 8.5, 14.0};
// Protocol bandwidth refinements: LL moves 8-byte words carrying 4 bytes of data and a 4-byte flag
// (x0.5); LL128 carries 120 data bytes per 128-byte line (NCCL uses 0.92); tree all-reduce x0.92;
// tree LL /3.8; tree LL128 x7/9 on one node, x120/128 across nodes.
constexpr double kRingLLFactor = 0.5;
constexpr double kRingLL128Factor = 0.92;
constexpr double kTreeFactor = 0.92;
constexpr double kTreeLLDivisor = 3.8;
// llMaxBws (GB/s): one node by GPU generation; 2 nodes / >2 nodes by host CPU vendor.
constexpr double kLLMaxOneNodeVolta_GBps = 39.0, kLLMaxOneNodeAmpere_GBps = 87.7;
constexpr double kLLMaxOneNodeHopper_GBps = 141.0, kLLMaxOneNodeBlackwell_GBps = 2 * 141.0;
constexpr double kLLMaxIntel_GBps[2] = {39.0, 20.4};
constexpr double kLLMaxAmd_GBps[2] = {22.5, 19.0};
// getNetOverhead(): per inter-node step, Intel 1 us, AMD 2 us, x3 for Simple.
constexpr double kNetOverheadIntel_us = 1.0, kNetOverheadAmd_us = 2.0, kNetOverheadSimpleFactor = 3.0;
// "Plateau effect of ring": multi-node ring Simple all-reduce latency x1.4 on sm80+ (x1.9 before).
constexpr double kRingPlateauFactor = 1.4, kRingPlateauFactorPreAmpere = 1.9;
// The plateau applies when bytes / (channels x ranks) >= 64; NCCL's channel count is not modelled,
// so assume 16 channels (NCCL's usual ring channel count on NVLink boxes).
constexpr double kAssumedChannels = 16;
// treeCorrectionFactor[protocol][log2(bytes/64)], powers of two from 64 B to 256 MB.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// nvlsEfficiency: Hopper 0.85, Blackwell 0.74 (src/graph/tuning.cc, same version).
constexpr double kNvlsEfficiencyHopper = 0.85, kNvlsEfficiencyBlackwell = 0.74;

// ---- NVLS all-reduce -----------------------------------------------------------------------------
// Traffic of one GPU's NVLink in an NVLS all-reduce of S bytes on n GPUs: each rank reduces its S/n
// shard with multimem.ld_reduce (the switch reads the shard from all n GPUs, so every GPU sends S in
// total) and broadcasts the result with multimem.st (S/n more out; (n-1)/n x S in). The busier
// direction carries S (n+1)/n, so bus bandwidth = link x 2(n-1)/n / ((n+1)/n) = link x 2(n-1)/(n+1),
// times NCCL's nvlsEfficiency.
// Start-up: fitted to microbench GT0441 (8x H200, 64 MiB, 346.51 GB/s busbw) given the bandwidth term
// above: 64 MiB x 1.75 / 346.51 GB/s = 338.9 us, minus 239.5 us of transfer at 490.3 GB/s = 99 us.
// (NCCL's own table says 25 us, which predicts 443 GB/s at 64 MiB: NVLS ramps up more slowly than
// its tuning table assumes.) The only parameter fitted to the microbench file.
constexpr double kNvlsStartup_us = 99.0;
// NCCL does not pick NVLS for groups of 4 GPUs or fewer (microbench GT0437: "NVLS not chosen <=4
// GPUs"); with the traffic model above it would gain only 2(n-1)/(n+1) x 0.85 = 1.02x there anyway.
constexpr int kNvlsMinRanks = 5;

double ll_max_GBps(const CommGroup& g) {
    if (g.nodes == 1) {
        switch (g.arch) {
            case GpuArch::volta: return kLLMaxOneNodeVolta_GBps;
            case GpuArch::hopper: return kLLMaxOneNodeHopper_GBps;
            case GpuArch::blackwell: return kLLMaxOneNodeBlackwell_GBps;
            default: return kLLMaxOneNodeAmpere_GBps;  // Ampere, Ada and non-NVIDIA parts
        }
    }
    const int column = g.nodes == 2 ? 0 : 1;
    return g.amd_host ? kLLMaxAmd_GBps[column] : kLLMaxIntel_GBps[column];
}

bool ll128_enabled(const CommGroup& g) {
    // NCCL enables LL128 by default only over NVLink (typeIntra <= PATH_NVB) on sm70+.
    const bool nvidia = g.arch == GpuArch::volta || g.arch == GpuArch::ampere || g.arch == GpuArch::ada ||
                        g.arch == GpuArch::hopper || g.arch == GpuArch::blackwell;
    return nvidia && g.intra_nvlink;
}

double traffic_factor(Collective op, int n) {
    switch (op) {
        case Collective::all_reduce: return 2.0 * (n - 1) / n;
        case Collective::reduce_scatter:
        case Collective::all_gather:
        case Collective::all_to_all: return double(n - 1) / n;
        case Collective::broadcast:
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

// Per-GPU bus bandwidth of a ring: the node fabric, or across nodes the NICs of the group's GPUs on
// one node (every ring channel leaves a node once, through its own NIC).
double ring_bus_GBps(const CommGroup& g, bool& network_bound) {
    if (g.nodes == 1) {
        network_bound = false;
        return g.intra_bus_GBps;
    }
    const double net = g.ranks_per_node * g.nic_GBps;
    const double intra = g.ranks_per_node > 1 ? g.intra_bus_GBps : std::numeric_limits<double>::infinity();
    network_bound = net <= intra;
    return std::min(net, intra);
}

struct Candidate {
    double seconds;
    CollectiveAlgo algo;
    NcclProtocol protocol;
    bool network_bound;
};

// NCCL's ring latency (ncclTopoTuneModel) for `steps` steps, of which the inter-node ones are slower.
double ring_latency_us(Collective op, const CommGroup& g, int p, double bytes) {
    const int n = g.ranks;
    const double intra_hw = g.intra_nvlink ? kHwLatRingNvlink_us[p] : kHwLatRingPci_us[p];
    double inter = (g.ranks_per_node == 1 ? kHwLatTreeNet_us[p] : kHwLatRingNet_us[p]) + g.net_latency_us;
    if (p == kSimple) inter += g.net_latency_us;  // NCCL adds the flush latency for Simple
    if (op == Collective::broadcast || op == Collective::send_recv || op == Collective::all_to_all)
        return kBaseLatRing_us[p] + (g.nodes > 1 ? inter : intra_hw);
    double intra = intra_hw;
    if (g.nodes > 1) {
        const double overhead = (g.amd_host ? kNetOverheadAmd_us : kNetOverheadIntel_us) *
                                (p == kSimple ? kNetOverheadSimpleFactor : 1.0);
        intra = std::max(intra, overhead);
    }
    const int steps = op == Collective::all_reduce ? 2 * (n - 1) : n - 1;
    const int inter_steps = g.nodes == 1 ? 0 : (op == Collective::all_reduce ? 2 * (g.nodes - 1) : g.nodes - 1);
    double lat = kBaseLatRing_us[p] + (steps - inter_steps) * intra + inter_steps * inter;
    if (op == Collective::all_reduce && p == kSimple && g.nodes > 1 && bytes / (kAssumedChannels * n) >= 64)
        lat *= g.arch == GpuArch::volta ? kRingPlateauFactorPreAmpere : kRingPlateauFactor;
    return lat;
}

double ring_seconds(Collective op, double bytes, const CommGroup& g, int p, double bus_GBps) {
    double bw = bus_GBps;
    if (p == kLL) bw = std::min(ll_max_GBps(g), bw * kRingLLFactor);
    if (p == kLL128) bw *= kRingLL128Factor;
    return ring_latency_us(op, g, p, bytes) * 1e-6 + bytes * traffic_factor(op, g.ranks) / (bw * 1e9);
}

double tree_seconds(double bytes, const CommGroup& g, int p, double bus_GBps) {
    double bw = bus_GBps * kTreeFactor;
    if (p == kLL) bw = std::min(bw / kTreeLLDivisor, ll_max_GBps(g));
    if (p == kLL128) bw *= g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    // NCCL: log2i(nBytes >> 6), an integer log.
    const uint64_t chunks = static_cast<uint64_t>(bytes) >> 6;
    if (chunks >= 1) {
        const int log_size = std::bit_width(chunks) - 1;
        if (log_size < 23) bw *= kTreeCorrection[p][log_size];
    }
    const double intra = g.intra_nvlink ? kHwLatTreeNvlink_us[p] : kHwLatTreePci_us[p];
    double inter = kHwLatTreeNet_us[p] + g.net_latency_us;
    if (p == kSimple) inter += g.net_latency_us;
    const int log2_nodes = std::bit_width(static_cast<unsigned>(g.nodes)) - 1;
    const double lat_us = kBaseLatTree_us[p] + 2 * ((g.ranks_per_node - 1) * intra + log2_nodes * inter);
    // NCCL's tree algorithm bandwidth is half its bus bandwidth (each byte goes up and down the tree).
    return lat_us * 1e-6 + bytes / (0.5 * bw * 1e9);
}

double nvls_efficiency(GpuArch arch) {
    return arch == GpuArch::blackwell ? kNvlsEfficiencyBlackwell : kNvlsEfficiencyHopper;
}

double nvls_bus_GBps(const CommGroup& g) {
    const int n = g.ranks;
    return g.intra_bus_GBps * 2.0 * (n - 1) / (n + 1) * nvls_efficiency(g.arch);
}

}  // namespace

double busbw_factor(Collective op, int ranks) {
    if (ranks <= 1) return 1.0;
    return traffic_factor(op, ranks);
}

CommGroup comm_group(const SystemSpec& system, int ranks, int ranks_per_node) {
    const std::string& file = system.name;
    if (ranks < 1) throw InputError(file, "parallel", "a communication group needs at least one rank");
    if (ranks_per_node < 1 || ranks_per_node > ranks)
        throw InputError(file, "parallel", "ranks per node must be between 1 and the group size");
    if (system.devices_per_node > 0 && ranks_per_node > system.devices_per_node)
        throw InputError(file, "gpus_per_node",
                         "a group with " + std::to_string(ranks_per_node) + " GPUs per node does not fit on " +
                             std::to_string(system.devices_per_node) + " GPUs");
    CommGroup g;
    g.ranks = ranks;
    g.ranks_per_node = ranks_per_node;
    g.nodes = (ranks + ranks_per_node - 1) / ranks_per_node;
    g.arch = gpu_arch(system.device);
    g.amd_host = system.host_cpu.vendor == "amd";
    g.net_latency_us = system.inter_node.latency_us;
    if (g.nodes > 1) {
        if (!(system.inter_node.bandwidth_GBps * system.inter_node.achievable_fraction > 0))
            throw InputError(file, "inter_node", "a group that spans nodes needs an inter-node network");
        // The node's GPUs of the group all leave through their closest NICs at once.
        g.nic_GBps = nic_share(system, ranks_per_node).per_gpu_GBps;
    }

    if (ranks_per_node > 1) {
        // The node's part of the rings: NCCL's channels spread over the GPU orders that fill the fabric.
        const RingPacking rings = pack_rings(system, ranks_per_node);
        g.intra_bus_GBps = rings.bus_GBps;
        g.intra_nvlink = rings.nvlink_only;
        g.nvswitch = rings.through_nvswitch;
    }
    g.nvls = g.nodes == 1 && g.nvswitch && g.intra_nvlink && ranks >= kNvlsMinRanks &&
             (g.arch == GpuArch::hopper || g.arch == GpuArch::blackwell);
    return g;
}

CollectiveCost collective_cost(Collective op, double bytes, const CommGroup& g, CollectiveAlgo algorithm) {
    CollectiveCost cost;
    if (g.ranks <= 1 || !(bytes > 0)) return cost;
    const int n = g.ranks;
    bool network_bound = false;
    const double bus = ring_bus_GBps(g, network_bound);

    Candidate best{std::numeric_limits<double>::infinity(), CollectiveAlgo::ring, NcclProtocol::simple, network_bound};
    auto consider = [&](double seconds, CollectiveAlgo algo, int p, bool net) {
        if (seconds < best.seconds) best = {seconds, algo, static_cast<NcclProtocol>(p), net};
    };

    if (op == Collective::all_to_all) {
        // Every rank sends (n-1)/n of its buffer, concurrently: the on-node part over the node fabric,
        // the off-node part through its own NIC (NCCL runs all-to-all as grouped send/recv, Simple).
        const double on_node = bytes * (g.ranks_per_node - 1) / n;
        const double off_node = bytes * (n - g.ranks_per_node) / n;
        const double t_on = on_node > 0 ? on_node / (g.intra_bus_GBps * 1e9) : 0;
        const double t_off = off_node > 0 ? off_node / (g.nic_GBps * 1e9) : 0;
        consider(ring_latency_us(op, g, kSimple, bytes) * 1e-6 + std::max(t_on, t_off), CollectiveAlgo::ring, kSimple,
                 t_off > t_on);
    } else if (op == Collective::send_recv && g.nodes > 1) {
        // A point-to-point message between nodes leaves through one GPU's NIC.
        const double lat = ring_latency_us(op, g, kSimple, bytes);
        consider(lat * 1e-6 + bytes / (g.nic_GBps * 1e9), CollectiveAlgo::ring, kSimple, true);
    } else {
        const bool all_reduce = op == Collective::all_reduce;
        const bool automatic = algorithm == CollectiveAlgo::automatic;
        const bool try_tree = all_reduce && (automatic || algorithm == CollectiveAlgo::tree);
        const bool try_nvls = all_reduce && g.nvls && (automatic || algorithm == CollectiveAlgo::nvls);
        // Ring always applies; it is also the fallback when the forced algorithm does not.
        const bool try_ring = automatic || algorithm == CollectiveAlgo::ring || (!try_tree && !try_nvls);
        for (int p = kLL; p <= kSimple; ++p) {
            if (p == kLL128 && !ll128_enabled(g)) continue;
            if (try_ring) consider(ring_seconds(op, bytes, g, p, bus), CollectiveAlgo::ring, p, network_bound);
            if (try_tree) consider(tree_seconds(bytes, g, p, bus), CollectiveAlgo::tree, p, network_bound);
        }
        if (try_nvls) {
            // NVLS runs with the Simple protocol only.
            const double seconds = kNvlsStartup_us * 1e-6 + bytes * traffic_factor(op, n) / (nvls_bus_GBps(g) * 1e9);
            consider(seconds, CollectiveAlgo::nvls, kSimple, false);
        }
    }
    cost.seconds = best.seconds;
    cost.algorithm = best.algo;
    cost.protocol = best.protocol;
    cost.network_bound = best.network_bound;
    cost.algbw_GBps = bytes / best.seconds / 1e9;
    cost.busbw_GBps = cost.algbw_GBps * busbw_factor(op, n);
    return cost;
}

double collective_seconds(Collective op, double bytes, const CommGroup& group, CollectiveAlgo algorithm) {
    return collective_cost(op, bytes, group, algorithm).seconds;
}

const char* to_string(Collective op) {
    switch (op) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_gather: return "all_gather";
        case Collective::broadcast: return "broadcast";
        case Collective::send_recv: return "send_recv";
        case Collective::all_to_all: return "all_to_all";
    }
    return "?";
}

const char* to_string(CollectiveAlgo algo) {
    switch (algo) {
        case CollectiveAlgo::automatic: return "auto";
        case CollectiveAlgo::ring: return "ring";
        case CollectiveAlgo::tree: return "tree";
        case CollectiveAlgo::nvls: return "nvls";
    }
    return "?";
}

const char* to_string(NcclProtocol protocol) {
    switch (protocol) {
        case NcclProtocol::ll: return "LL";
        case NcclProtocol::ll128: return "LL128";
        case NcclProtocol::simple: return "Simple";
    }
    return "?";
}

}  // namespace ftb
