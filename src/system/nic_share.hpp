// How much of the node's NICs each GPU gets when the GPUs of a group talk to other nodes at once
// (DESIGN.md §4 "collectives"). NCCL sends a GPU's inter-node traffic through the NIC closest to it
// (NVIDIA/nccl src/graph/search.cc, ncclTopoSelectNets: NICs ordered by path type and bandwidth from
// the GPU, GPUs spread over equally close NICs), so GPUs that share a NIC split its line rate, and
// GPUs and NICs behind one PCIe switch uplink split that too.
#pragma once
#include <vector>

#include "ftbound/system_spec.hpp"

namespace ftb {

struct NicShare {
    double per_gpu_GBps = 0;        // achievable, per direction, for the slowest GPU of the group
    std::vector<int> nic_of_gpu;    // component index of the NIC each GPU uses
    std::vector<int> links_used;    // indices into SystemSpec::links on the GPU-to-NIC paths
};

// GPUs gpu0..gpu{gpus-1} of one node all sending at once. Each NIC runs at the system's inter_node
// fabric rate (system.inter_node: bandwidth x achievable fraction). A system without NIC components
// (a composed one) has one NIC per GPU on a private path: the fabric rate itself.
NicShare nic_share(const SystemSpec& system, int gpus);

}  // namespace ftb
