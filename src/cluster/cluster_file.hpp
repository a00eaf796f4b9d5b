// The cluster system file rank 0 writes: the system-file format `probe --out` writes (data/README.md systems/),
// so `hardware.system: FILE` takes it, with the typical node (each measured figure the median over the nodes),
// `inter_node` from the measured point-to-point rates between nodes, and a `cluster:` section the planner does
// not read: per-tier rates, collectives, each figure's spread across nodes, outliers and failed ranks.
#pragma once
#include <string>
#include <vector>

#include "cluster/cluster_analysis.hpp"

namespace ftb::cluster {

std::string cluster_system_yaml(const ClusterInput& in, const ClusterSummary& s);

// Where a name of `measured_fields` lives in a system file: "host_cpu.tflops.fp32" -> {"cpu", "tflops", "fp32"};
// "links.gpu0-cpu0.bandwidth_GBps" -> {"links", "gpu0-cpu0", "link", "bandwidth_GBps"}. Empty for names it
// does not know.
std::vector<std::string> measured_field_path(const std::string& field);

}  // namespace ftb::cluster
