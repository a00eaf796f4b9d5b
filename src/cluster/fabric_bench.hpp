// The fabric measurements of `probe --cluster`, over a Transport: point-to-point latency and bandwidth of every
// rank to its neighbour (within its node, and to the same local rank on the next node), one pair at a time as rank 0
// directs them (cluster_probe.cpp), then all-reduce, all-gather, reduce-scatter and all-to-all over sizes, all
// ranks together. Each rank times its own part; rank 0 puts them together (cluster_analysis.hpp).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/transport.hpp"

namespace ftb::cluster {

// Where the ranks are: hosts in order of their lowest rank, each host's ranks in rank order.
struct Layout {
    std::vector<std::string> hosts;
    std::vector<std::vector<int>> ranks_of_host;
    int host_of(int rank) const;  // -1: not in the layout
};

// What to measure: the same on every rank (rank 0 sends it).
struct FabricPlan {
    std::vector<double> collective_bytes = {4096, 65536, 1 << 20, 16 << 20};  // nccl-tests' size S per op
    int collective_reps = 5;      // back-to-back operations per sample
    int samples = 5;              // samples per figure (after one warm-up)
    double p2p_bytes = 4 << 20;   // one message of the bandwidth test
    int p2p_reps = 8;             // messages per bandwidth sample
    int latency_reps = 20;        // round trips per latency sample
    double timeout_s = 60;        // the longest one wait may take
};

// One rank's send to its neighbour in one tier (intra_node: the next rank on the node; inter_node: the rank with
// the same place on the next node).
struct PairSamples {
    std::string tier;
    int src = 0, dst = 0;
    std::vector<double> GBps;        // per sample, at the receiver: p2p_reps - 1 messages / time between the first and last arrival
    std::vector<double> latency_us;  // per sample: half a round trip of 8 bytes
};

struct CollectiveSamples {
    Collective op = Collective::all_reduce;
    double bytes = 0;
    std::vector<double> seconds;  // per sample, this rank's mean time of one operation
};

struct RankFabric {
    int rank = 0;
    std::vector<PairSamples> sends;
    std::vector<CollectiveSamples> collectives;
    std::string stopped;  // empty, or why the rank stopped measuring (a wait that timed out or failed)
};

// A wait of the fabric measurements that did not finish: the partner hung, died or is too slow for the timeout.
struct FabricStop {
    std::string why;
};

// One pair test. The sending side times the latency (8-byte round trips) and streams the bandwidth messages
// (p2p_reps of them, then waits for the receiver's 1-byte acknowledgement); the receiving side times the
// bandwidth by the arrivals: p2p_reps - 1 messages after the first, so its own slowness (its acknowledgement)
// does not count against the sender. `send_delay_us` > 0 waits that long before each of this rank's sends: the
// slow rank of the tests (FTBOUND_PROBE_SEND_DELAY_US). Both throw FabricStop.
PairSamples measure_send(Transport& t, const FabricPlan& plan, const std::string& tier, int to, double send_delay_us);
std::vector<double> answer_send(Transport& t, const FabricPlan& plan, const std::string& tier, int from, double send_delay_us);

// The collectives over the transport's group of `ranks` ranks: each op and size, one warm-up and plan.samples
// samples of plan.collective_reps back-to-back operations after a barrier. Stops at the first wait that does not
// finish (`stopped` says which); what was measured before stays.
std::vector<CollectiveSamples> measure_collectives(Transport& t, const FabricPlan& plan, int ranks, double send_delay_us,
                                                   std::string& stopped);

// The pair tests in the order they run, one at a time: each rank to the next rank on its node (intra_node), then
// each rank to the rank with the same place on the next node (inter_node). Rings of one member have no pair.
struct PairTest {
    std::string tier;
    int src = 0, dst = 0;
};
std::vector<PairTest> pair_schedule(const Layout& layout);

nlohmann::json to_json(const PairSamples& p);
PairSamples pair_samples_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CollectiveSamples& c);
CollectiveSamples collective_samples_from_json(const nlohmann::json& j);
nlohmann::json to_json(const FabricPlan& p);
FabricPlan fabric_plan_from_json(const nlohmann::json& j);

}  // namespace ftb::cluster
