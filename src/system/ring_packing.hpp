// The ring channels NCCL lays over one node's GPU fabric, and the bus bandwidth they add up to
// (DESIGN.md §4 "collectives").
//
// NCCL searches its rings on the topology graph (NVIDIA/nccl src/graph/search.cc, ncclTopoCompute and
// ncclTopoSearchRec): each channel is a ring through every GPU of the node, and each channel reserves
// its bandwidth (graph->bwIntra) on every link of every hop (followPath subtracts it), so channels that
// share a link split it. When one GPU order cannot fill the links, the search retries with
// sameChannels = 0, letting channels take different GPU orders, and it stops as optimal once
// nChannels x bwIntra reaches a GPU's total NVLink bandwidth (system->totalBw, getTotalBw). The tuning
// model then takes the ring's bus bandwidth as nChannels x bwIntra (src/graph/tuning.cc).
//
// On an NVSwitch every order crosses each GPU's NVLink once, so one order fills it. On a switchless
// mesh (the 4-GPU HGX board with 6 NVLinks to each peer, MI300X's 8-GPU Infinity Fabric with one link
// per pair) one order uses only one peer link per GPU; the channels spread over several orders and
// together use every peer link. Across PCIe the order that crosses the CPU-to-CPU link least wins.
//
// pack_rings reproduces that outcome: it hands bandwidth in small quanta to the widest ring (the GPU
// order whose busiest link direction has the most left), as the search does channel by channel, until
// no order has bandwidth left.
#pragma once
#include <vector>

#include "ftbound/system_spec.hpp"

namespace ftb {

struct RingPacking {
    double bus_GBps = 0;            // per-GPU ring bandwidth of all channels together (achievable)
    int orders_used = 0;            // distinct GPU orders that carry bandwidth
    bool nvlink_only = true;        // every hop of every used order is NVLink-class (NVLink, xGMI)
    bool through_nvswitch = false;  // some used hop crosses an NVSwitch
    std::vector<int> links_used;    // indices into SystemSpec::links that carry ring traffic
};

// Rings through GPUs gpu0..gpu{ranks-1} of `system` (one node). Orders are searched exhaustively up to
// kMaxSearchedRanks GPUs; larger groups (NVSwitch domains such as NVL72) use the natural order and its
// reverse. Throws InputError when a GPU component is missing or two GPUs cannot reach each other.
RingPacking pack_rings(const SystemSpec& system, int ranks);

inline constexpr int kMaxSearchedRanks = 8;

}  // namespace ftb
