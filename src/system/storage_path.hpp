// Writing a checkpoint to the node's own NVMe drives, through the topology (DESIGN.md §4 "transfers").
// The state is staged in host memory, evenly over the sockets (each GPU copies its shard to the memory
// of its own socket), and striped evenly over every drive (RAID 0 or a striped file system), so drives
// on the other socket are reached over the socket link and drives behind a PCIe switch share its uplink.
// Each drive writes at most storage.write_GBps / drives.
#pragma once
#include <vector>

#include "ftbound/system_spec.hpp"

namespace ftb {

struct NvmeWrite {
    double write_GBps = 0;          // the whole array, bytes/s / 1e9
    std::vector<int> links_used;    // indices into SystemSpec::links on the socket-to-drive paths
};

// A system without NVMe components writes at its stated storage.write_GBps.
NvmeWrite nvme_array_write(const SystemSpec& system);

}  // namespace ftb
