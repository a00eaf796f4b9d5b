// Storage tiers a job reads its data from and writes its checkpoints to (data/storage/): a node's own NVMe
// drives, or shared storage (NFS, a parallel file system, an object store) with a limit per node and a limit
// for all nodes together. Figures are GB/s (1e9 bytes/s).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ftb {

struct StorageTier {
    std::string name;                     // catalog name, or "custom" for figures given in the job
    bool node_local = false;              // the node's own drives: per-node figures come from the system
    bool durable = true;                  // survives the loss of a node (node-local drives do not)
    double write_GBps_per_node = 0;       // what one node's client can write (0 with node_local: the system's)
    double read_GBps_per_node = 0;
    double aggregate_write_GBps = 0;      // all nodes together (0 = no shared limit)
    double aggregate_read_GBps = 0;
    std::vector<std::string> sources;
};

// What a job file names: a tier by name (empty = the default for the job's node count) and figures that
// replace the tier's.
struct StorageChoice {
    std::string tier;
    std::optional<double> write_GBps_per_node, read_GBps_per_node, aggregate_write_GBps, aggregate_read_GBps;
    bool explicit_figures() const {
        return write_GBps_per_node || read_GBps_per_node || aggregate_write_GBps || aggregate_read_GBps;
    }
};

}  // namespace ftb
