// Alpha-beta cost of NCCL collectives (DESIGN.md §4 "collectives").
//
// Sizes follow nccl-tests (doc/PERFORMANCE.md): `bytes` is the size column of the *_perf tools —
// the all-reduce / broadcast buffer, the all-gather output, the reduce-scatter input, the
// send/recv message, the all-to-all send buffer of one rank. algbw = bytes / time;
// busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (all-gather, reduce-scatter, all-to-all),
// x 1 (broadcast, send/recv).
//
// The model is NCCL's own tuning model (NVIDIA/nccl v2.28.3 src/graph/tuning.cc), with the
// bandwidth taken from the system's links instead of NCCL's topology search:
//   time = latency(algorithm, protocol, steps) + bytes x traffic_factor / bus_bandwidth(algorithm, protocol)
// and the automatic choice is the fastest (algorithm, protocol) pair, as NCCL picks it.
//
// Build a CommGroup once per parallel layout (it walks the topology); collective_seconds() is then a
// few dozen flops: no allocation, no strings.
#pragma once
#include <cstdint>

#include "ftbound/system_spec.hpp"
#include "system/device_arch.hpp"

namespace ftb {

enum class Collective { all_reduce, reduce_scatter, all_gather, broadcast, send_recv, all_to_all };
enum class CollectiveAlgo { automatic, ring, tree, nvls };
enum class NcclProtocol { ll, ll128, simple };

// The fabric a communication group runs on, reduced to the numbers the cost model needs.
struct CommGroup {
    int ranks = 1;                     // n: GPUs in the group
    int ranks_per_node = 1;            // GPUs of the group on each node
    int nodes = 1;                     // nodes spanned
    double intra_bus_GBps = 0;         // per-GPU achievable bandwidth of a ring through the node's fabric
    bool intra_nvlink = false;         // NVLink-class fabric (NCCL's NVLink latency class), else PCI class
    bool nvswitch = false;             // the GPUs meet at an NVSwitch
    double nic_GBps = 0;               // per-GPU NIC, achievable, per direction
    double net_latency_us = 0;         // NIC/fabric latency (NCCL's graph latencyInter)
    GpuArch arch = GpuArch::other;     // selects NCCL's per-architecture constants
    bool amd_host = false;             // NCCL's LL ceilings and network overhead differ for AMD hosts
    bool nvls = false;                 // NVLink SHARP all-reduce usable (see comm_group)
};

// A group of `ranks` GPUs, `ranks_per_node` on each node, on `system` (GPUs gpu0.. of a node form the
// node's part of the group). Throws InputError for impossible shapes (more ranks per node than GPUs).
CommGroup comm_group(const SystemSpec& system, int ranks, int ranks_per_node);

struct CollectiveCost {
    double seconds = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
    CollectiveAlgo algorithm = CollectiveAlgo::ring;
    NcclProtocol protocol = NcclProtocol::simple;
    bool network_bound = false;        // the bandwidth term is set by the inter-node NICs
};

// Hot path: arithmetic only. `algorithm` forces an algorithm (as NCCL_ALGO would); automatic picks the
// fastest. An algorithm that does not apply (tree for all-gather, NVLS without NVLink SHARP) falls back
// to ring. A group of one rank costs nothing.
CollectiveCost collective_cost(Collective op, double bytes, const CommGroup& group,
                               CollectiveAlgo algorithm = CollectiveAlgo::automatic);
double collective_seconds(Collective op, double bytes, const CommGroup& group,
                          CollectiveAlgo algorithm = CollectiveAlgo::automatic);

// nccl-tests' busbw factor for `op` on n ranks.
double busbw_factor(Collective op, int ranks);

const char* to_string(Collective op);
const char* to_string(CollectiveAlgo algo);
const char* to_string(NcclProtocol protocol);

}  // namespace ftb
