// What rank 0 makes of everything the ranks measured: per-tier point-to-point rates with their spread across
// ranks, the collectives (nccl-tests' algbw/busbw), each node figure's spread across nodes, and the outliers named
// (node, rank, link, measured vs expected). Pure: the gathered results in, a summary out.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/collective_timing.hpp"
#include "cluster/fabric_bench.hpp"

namespace ftb::cluster {

// A link or node figure this far below the median of its peers (or a latency this far above) is an outlier:
// e.g. a NIC at half its rate, or a PCIe link trained at x8. A design choice: repeated samples of one healthy link
// stay within a few per cent of each other on an idle machine, and within ~2x on a 2-core VM running 4 ranks.
inline constexpr double kLinkOutlierFraction = 0.4;
inline constexpr double kNodeOutlierFraction = 0.8;
inline constexpr size_t kMinLinksForOutliers = 3;
// A latency outlier is also this much above its peers: a few microseconds of scheduling jitter on a busy host
// multiply a microsecond latency without meaning anything (a design choice).
inline constexpr double kLatencyOutlierMarginUs = 20;  // links in a tier before one of them can be called an outlier

// What one node's local rank 0 measured: `probe --json`'s document and the system file of that node.
struct NodeResult {
    std::string host;
    int rank = 0;
    nlohmann::json probe;
    std::string system_yaml;
};

struct RankFailure {
    int rank = 0;
    std::string host;   // empty when the rank never said
    std::string phase;  // node measurement | fabric measurement | ...
    std::string reason;
};

struct ClusterInput {
    std::string launcher;
    std::string transport;
    int world_size = 0;
    Layout layout;  // the ranks that answered the roll call
    std::vector<NodeResult> nodes;
    std::vector<RankFabric> fabric;
    std::vector<RankFailure> failures;
    std::vector<std::string> notes;  // how the run went where it matters (e.g. NCCL did not start: measured over MPI)
};

struct Spread {
    int count = 0;
    double min = 0, median = 0, max = 0;
    std::string min_at, max_at;   // the node or link at each end
    double relative() const { return median > 0 ? (max - min) / median : 0.0; }
};

struct TierFigures {
    std::string tier;   // intra_node | inter_node
    Spread p2p_GBps;    // over the tier's links, each the median of its samples
    Spread latency_us;
};

struct Outlier {
    std::string node;
    int rank = -1;      // the rank that measured it (for a node figure, its local rank 0); -1: none
    std::string link;   // what was measured: "rank 2 -> rank 3 (intra_node)", "pcie 0000:17:00.0 (gpu)", ...
    std::string figure; // p2p_GBps | latency_us | host.memory_bandwidth_GBps | pcie_link_GBps | ...
    std::string unit;
    double measured = 0, expected = 0;
    std::string expected_from;  // "median of the other 3 links", "the device's maximum gen5 x16", ...
};

struct ClusterSummary {
    std::vector<TierFigures> tiers;
    std::vector<CollectiveFigure> collectives;  // over every rank that answered
    std::map<std::string, Spread> node_figures; // figure -> spread across nodes
    std::vector<Outlier> outliers;
    std::vector<RankFailure> failures;
    std::vector<std::string> notes;             // ranks that stopped measuring early, and why
};

ClusterSummary analyse_cluster(const ClusterInput& in);

// A node's rates from its `probe --json` document: host.memory_bandwidth_GBps, host.fp32_tflops, storage.read_GBps,
// gpu0.hbm_GBps, ... (measured figures only; higher is better for each).
std::map<std::string, double> node_rates(const nlohmann::json& probe);

// The `cluster:` section of the file and of `--json`, keys in reading order.
nlohmann::ordered_json to_json(const ClusterSummary& s, const ClusterInput& in);
std::string to_text(const ClusterSummary& s, const ClusterInput& in);

}  // namespace ftb::cluster
