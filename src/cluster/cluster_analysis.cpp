#include "cluster/cluster_analysis.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "probe/probe_types.hpp"
#include "probe/sysfs.hpp"

namespace ftb::cluster {
namespace {

double median_of(std::vector<double> v) { return probe::measurement_of(std::move(v)).median(); }

struct Labelled {
    std::string label;
    double value;
};

Spread spread_of(const std::vector<Labelled>& values) {
    Spread s;
    s.count = static_cast<int>(values.size());
    if (values.empty()) return s;
    std::vector<double> v;
    for (const auto& x : values) v.push_back(x.value);
    s.median = median_of(v);
    auto [lo, hi] = std::minmax_element(values.begin(), values.end(), [](auto& a, auto& b) { return a.value < b.value; });
    s.min = lo->value;
    s.min_at = lo->label;
    s.max = hi->value;
    s.max_at = hi->label;
    return s;
}

// The median of every value but the i-th: what a peer of the i-th measures.
double median_of_others(const std::vector<Labelled>& values, size_t i) {
    std::vector<double> v;
    for (size_t j = 0; j < values.size(); ++j)
        if (j != i) v.push_back(values[j].value);
    return median_of(v);
}

std::string host_of(const ClusterInput& in, int rank) {
    const int h = in.layout.host_of(rank);
    return h < 0 ? std::string("?") : in.layout.hosts[static_cast<size_t>(h)];
}

std::string link_label(const ClusterInput& in, const PairSamples& p) {
    return fmt::format("rank {} ({}) -> rank {} ({}), {}", p.src, host_of(in, p.src), p.dst, host_of(in, p.dst), p.tier);
}

// Links of one tier: their figures' spread, and the links far below (or, for latency, above) their peers.
void analyse_tier(const ClusterInput& in, const std::string& tier, ClusterSummary& s) {
    std::vector<const PairSamples*> pairs;
    for (const auto& f : in.fabric)
        for (const auto& p : f.sends)
            if (p.tier == tier && !p.GBps.empty()) pairs.push_back(&p);
    if (pairs.empty()) return;
    std::vector<Labelled> bw, lat, bw_best, lat_best;
    for (const auto* p : pairs) {
        bw.push_back({link_label(in, *p), median_of(p->GBps)});
        lat.push_back({link_label(in, *p), median_of(p->latency_us)});
        // Outliers are judged on each link's best sample: other work on the machine only ever slows a sample
        // down, while a slow link is slow in every sample.
        bw_best.push_back({bw.back().label, *std::max_element(p->GBps.begin(), p->GBps.end())});
        lat_best.push_back({lat.back().label, p->latency_us.empty() ? 0.0 : *std::min_element(p->latency_us.begin(), p->latency_us.end())});
    }
    s.tiers.push_back({tier, spread_of(bw), spread_of(lat)});
    // Two links of one pair of ranks cannot say which end is slow, nor tell noise from a fault.
    if (pairs.size() < kMinLinksForOutliers) return;
    // Bandwidth is timed by the sender streaming to its neighbour: a slow link is the sender's.
    const std::string peers = fmt::format("median of the other {} {} links' best samples", pairs.size() - 1, tier);
    for (size_t i = 0; i < pairs.size(); ++i) {
        const double expected = median_of_others(bw_best, i);
        if (bw_best[i].value < kLinkOutlierFraction * expected)
            s.outliers.push_back({host_of(in, pairs[i]->src), pairs[i]->src, bw_best[i].label, "p2p_GBps", "GB/s",
                                  bw_best[i].value, expected, peers});
    }
    // A round trip waits on both ends: a rank is slow when even its best link is, and its neighbours are not.
    std::map<int, double> best;
    for (size_t i = 0; i < pairs.size(); ++i)
        for (int r : {pairs[i]->src, pairs[i]->dst})
            best[r] = best.count(r) ? std::min(best[r], lat_best[i].value) : lat_best[i].value;
    std::vector<Labelled> by_rank;
    std::vector<int> ranks;
    for (const auto& [r, v] : best) {
        by_rank.push_back({fmt::format("rank {} ({}), its best {} link", r, host_of(in, r), tier), v});
        ranks.push_back(r);
    }
    for (size_t i = 0; i < by_rank.size(); ++i) {
        const double expected = median_of_others(by_rank, i);
        if (by_rank[i].value * kLinkOutlierFraction > expected && by_rank[i].value > expected + kLatencyOutlierMarginUs)
            s.outliers.push_back({host_of(in, ranks[i]), ranks[i], by_rank[i].label, "latency_us", "us", by_rank[i].value,
                                  expected, fmt::format("median of the other {} ranks' best {} sample", by_rank.size() - 1, tier)});
    }
}

void analyse_collectives(const ClusterInput& in, ClusterSummary& s) {
    // Keyed by (op, bytes) in the order the ranks ran them; only the ranks that measured every sample count.
    std::vector<std::pair<Collective, double>> keys;
    std::map<std::pair<int, double>, std::vector<std::vector<double>>> per_rank;
    for (const auto& f : in.fabric)
        for (const auto& c : f.collectives) {
            auto key = std::make_pair(static_cast<int>(c.op), c.bytes);
            if (!per_rank.count(key)) keys.emplace_back(c.op, c.bytes);
            per_rank[key].push_back(c.seconds);
        }
    int ranks = 0;
    for (const auto& r : in.layout.ranks_of_host) ranks += static_cast<int>(r.size());
    for (const auto& [op, bytes] : keys) {
        const auto& times = per_rank[{static_cast<int>(op), bytes}];
        if (static_cast<int>(times.size()) != ranks) continue;  // a rank stopped before this one: not comparable
        s.collectives.push_back(collective_figure(op, bytes, times));
    }
}

std::string pcie_text(int gen, int width) { return fmt::format("gen{} x{}", gen, width); }

// PCIe links trained below what the device supports (for GPUs: the width from sysfs, the generation from NVML
// under load, since an idle GPU drops its link rate on purpose).
void pcie_outliers(const NodeResult& n, ClusterSummary& s) {
    for (const auto& d : n.probe.value("pcie", nlohmann::json::array())) {
        if (!d.value("downtrained", false)) continue;
        const int gen = d.value("gen", 0), width = d.value("width", 0), max_gen = d.value("max_gen", 0),
                  max_width = d.value("max_width", 0);
        const std::string kind = d.value("kind", "other");
        if (kind == "gpu" && width >= max_width) continue;
        s.outliers.push_back({n.host, n.rank, fmt::format("pcie {} ({}) at {}", d.value("address", ""), kind, pcie_text(gen, width)),
                              "pcie_link_GBps", "GB/s", probe::pcie_link_GBps(gen, width),
                              probe::pcie_link_GBps(max_gen, max_width),
                              "the device's maximum " + pcie_text(max_gen, max_width)});
    }
    for (const auto& g : n.probe.value("gpus", nlohmann::json::array())) {
        const auto& p = g.value("pcie", nlohmann::json::object());
        const int gen = p.value("gen", 0), width = p.value("width", 0), max_gen = p.value("max_gen", 0);
        if (g.value("h2d_GBps", nlohmann::json()).is_null() || gen <= 0 || gen >= max_gen) continue;
        s.outliers.push_back({n.host, n.rank, fmt::format("gpu{} pcie under load at {}", g.value("index", 0), pcie_text(gen, width)),
                              "pcie_link_GBps", "GB/s", probe::pcie_link_GBps(gen, width),
                              probe::pcie_link_GBps(max_gen, width), "the GPU's maximum gen" + std::to_string(max_gen)});
    }
}

void analyse_nodes(const ClusterInput& in, ClusterSummary& s) {
    std::map<std::string, std::vector<Labelled>> by_figure;
    for (const auto& n : in.nodes) {
        for (const auto& [figure, value] : node_rates(n.probe)) by_figure[figure].push_back({n.host, value});
        pcie_outliers(n, s);
    }
    for (const auto& [figure, values] : by_figure) {
        s.node_figures[figure] = spread_of(values);
        if (values.size() < 2) continue;
        for (size_t i = 0; i < values.size(); ++i) {
            const double expected = median_of_others(values, i);
            if (values[i].value >= kNodeOutlierFraction * expected) continue;
            int rank = -1;
            for (const auto& n : in.nodes)
                if (n.host == values[i].label) rank = n.rank;
            s.outliers.push_back({values[i].label, rank, "node " + values[i].label, figure, "", values[i].value, expected,
                                  fmt::format("median of the other {} nodes", values.size() - 1)});
        }
    }
}

void add_number(std::map<std::string, double>& out, const std::string& key, const nlohmann::json& v) {
    if (v.is_number() && v.get<double>() > 0) out[key] = v.get<double>();
}

}  // namespace

std::map<std::string, double> node_rates(const nlohmann::json& probe) {
    std::map<std::string, double> out;
    const auto& host = probe.value("host", nlohmann::json::object());
    for (const char* k : {"memory_bandwidth_GBps", "fp32_tflops", "bf16_tflops", "first_touch_GBps"})
        add_number(out, std::string("host.") + k, host.value(k, nlohmann::json()));
    const auto& storage = probe.value("storage", nlohmann::json::object());
    for (const char* k : {"read_GBps", "write_GBps"}) add_number(out, std::string("storage.") + k, storage.value(k, nlohmann::json()));
    for (const auto& g : probe.value("gpus", nlohmann::json::array())) {
        const std::string p = fmt::format("gpu{}.", g.value("index", 0));
        for (const char* k : {"h2d_GBps", "d2h_GBps", "hbm_GBps"}) add_number(out, p + k, g.value(k, nlohmann::json()));
        for (auto& [dtype, v] : g.value("tflops", nlohmann::json::object()).items()) add_number(out, p + "tflops." + dtype, v);
    }
    return out;
}

ClusterSummary analyse_cluster(const ClusterInput& in) {
    ClusterSummary s;
    s.failures = in.failures;
    s.notes = in.notes;
    analyse_tier(in, "intra_node", s);
    analyse_tier(in, "inter_node", s);
    analyse_collectives(in, s);
    analyse_nodes(in, s);
    for (const auto& f : in.fabric)
        if (!f.stopped.empty())
            s.notes.push_back(fmt::format("rank {} ({}) stopped measuring the fabric: {}", f.rank, host_of(in, f.rank), f.stopped));
    return s;
}

namespace {

nlohmann::ordered_json spread_json(const Spread& s) {
    return {{"count", s.count}, {"min", s.min}, {"median", s.median}, {"max", s.max}, {"min_at", s.min_at},
            {"max_at", s.max_at}, {"relative_spread", s.relative()}};
}

}  // namespace

nlohmann::ordered_json to_json(const ClusterSummary& s, const ClusterInput& in) {
    nlohmann::ordered_json j;
    j["launcher"] = in.launcher;
    j["transport"] = in.transport;
    j["world_size"] = in.world_size;
    j["ranks_answered"] = 0;
    j["nodes"] = in.layout.hosts.size();
    int answered = 0;
    nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
    for (size_t h = 0; h < in.layout.hosts.size(); ++h) {
        hosts.push_back({{"host", in.layout.hosts[h]}, {"ranks", in.layout.ranks_of_host[h]}});
        answered += static_cast<int>(in.layout.ranks_of_host[h].size());
    }
    j["ranks_answered"] = answered;
    j["hosts"] = hosts;
    nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
    for (const auto& t : s.tiers) tiers[t.tier] = {{"p2p_GBps", spread_json(t.p2p_GBps)}, {"latency_us", spread_json(t.latency_us)}};
    j["tiers"] = tiers;
    nlohmann::ordered_json colls = nlohmann::ordered_json::array();
    for (const auto& c : s.collectives)
        colls.push_back({{"op", collective_name(c.op)}, {"bytes", c.bytes}, {"ranks", c.ranks},
                         {"time_us", c.median_seconds() * 1e6}, {"algbw_GBps", c.algbw_GBps()}, {"busbw_GBps", c.busbw_GBps()},
                         {"busbw_samples_GBps", c.busbw_samples_GBps()}});
    j["collectives"] = colls;
    nlohmann::ordered_json nodes = nlohmann::ordered_json::object();
    for (const auto& [figure, sp] : s.node_figures) nodes[figure] = spread_json(sp);
    j["node_figures"] = nodes;
    nlohmann::ordered_json outliers = nlohmann::ordered_json::array();
    for (const auto& o : s.outliers)
        outliers.push_back({{"node", o.node}, {"rank", o.rank < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.rank)},
                            {"link", o.link}, {"figure", o.figure}, {"unit", o.unit}, {"measured", o.measured},
                            {"expected", o.expected}, {"expected_from", o.expected_from},
                            {"ratio", o.expected > 0 ? o.measured / o.expected : 0.0}});
    j["outliers"] = outliers;
    nlohmann::ordered_json failed = nlohmann::ordered_json::array();
    for (const auto& f : s.failures)
        failed.push_back({{"rank", f.rank}, {"host", f.host}, {"phase", f.phase}, {"reason", f.reason}});
    j["failed"] = failed;
    j["notes"] = s.notes;
    return j;
}

std::string to_text(const ClusterSummary& s, const ClusterInput& in) {
    std::string out = fmt::format("cluster: {} ranks on {} nodes ({}), fabric over {}\n", in.world_size,
                                  in.layout.hosts.size(), in.launcher, in.transport);
    for (const auto& t : s.tiers)
        out += fmt::format("  {:<10} point-to-point {:.2f} GB/s median (min {:.2f}, max {:.2f} over {} links), latency "
                           "{:.1f} us median (max {:.1f})\n",
                           t.tier, t.p2p_GBps.median, t.p2p_GBps.min, t.p2p_GBps.max, t.p2p_GBps.count, t.latency_us.median,
                           t.latency_us.max);
    if (!s.collectives.empty()) {
        out += fmt::format("\n  {:<15} {:>12} {:>6} {:>12} {:>11} {:>11}\n", "collective", "bytes", "ranks", "time us",
                           "algbw GB/s", "busbw GB/s");
        for (const auto& c : s.collectives)
            out += fmt::format("  {:<15} {:>12.0f} {:>6} {:>12.1f} {:>11.3f} {:>11.3f}\n", collective_name(c.op), c.bytes,
                               c.ranks, c.median_seconds() * 1e6, c.algbw_GBps(), c.busbw_GBps());
    }
    if (!s.node_figures.empty()) {
        out += "\n  node figure                      median        min (node)            max (node)\n";
        for (const auto& [figure, sp] : s.node_figures)
            out += fmt::format("  {:<30} {:>8.3f}  {:>8.3f} ({})  {:>8.3f} ({})\n", figure, sp.median, sp.min, sp.min_at,
                               sp.max, sp.max_at);
    }
    out += s.outliers.empty() ? "\noutliers: none\n" : "\noutliers:\n";
    for (const auto& o : s.outliers)
        out += fmt::format("  {}: {} {:.3g} {} vs {:.3g} expected ({}), {:.2f}x\n", o.link, o.figure, o.measured, o.unit,
                           o.expected, o.expected_from, o.expected > 0 ? o.measured / o.expected : 0.0);
    for (const auto& n : s.notes) out += "note: " + n + "\n";
    return out;
}

}  // namespace ftb::cluster
