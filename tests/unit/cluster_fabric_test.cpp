// The cluster probe's pure parts: nccl-tests' algbw -> busbw, collective figures from the ranks' timings, the pair
// schedule, outliers, and the cluster system file the planner takes.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "cluster/cluster_analysis.hpp"
#include "cluster/cluster_file.hpp"
#include "cluster/collective_timing.hpp"
#include "cluster/fabric_bench.hpp"
#include "probe/probe.hpp"
#include "spec/catalog.hpp"

using namespace ftb;
using namespace ftb::cluster;

TEST(ClusterBusbw, NcclTestsDefinitions) {
    // nccl-tests doc/PERFORMANCE.md: algbw = S/t; busbw = algbw x 2(n-1)/n (all-reduce), x (n-1)/n (all-gather,
    // reduce-scatter, all-to-all), x 1 (broadcast). 1 GB in 0.1 s is 10 GB/s of algbw.
    EXPECT_DOUBLE_EQ(algbw_GBps(1e9, 0.1), 10.0);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::all_reduce, 8, 1e9, 0.1), 17.5);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::all_gather, 8, 1e9, 0.1), 8.75);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::reduce_scatter, 8, 1e9, 0.1), 8.75);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::all_to_all, 8, 1e9, 0.1), 8.75);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::broadcast, 8, 1e9, 0.1), 10.0);
    EXPECT_DOUBLE_EQ(busbw_GBps(Collective::all_reduce, 2, 1e9, 0.1), 10.0);  // 2(n-1)/n = 1 for two ranks
    // 4 ranks, 16 MiB all-reduce in 12.5 ms: 1.342 GB/s algbw, x 1.5 busbw.
    EXPECT_NEAR(busbw_GBps(Collective::all_reduce, 4, 16 * 1048576.0, 0.0125), 16 * 1048576.0 / 0.0125 / 1e9 * 1.5, 1e-12);
}

TEST(ClusterBusbw, FigureAveragesRanksPerSample) {
    // nccl-tests averages each rank's time over the ranks (-a 1); samples missing on a rank are dropped.
    CollectiveFigure f = collective_figure(Collective::all_reduce, 4e6, {{0.001, 0.002, 0.004}, {0.003, 0.002}});
    ASSERT_EQ(f.seconds.size(), 2u);
    EXPECT_DOUBLE_EQ(f.seconds[0], 0.002);
    EXPECT_DOUBLE_EQ(f.seconds[1], 0.002);
    EXPECT_EQ(f.ranks, 2);
    EXPECT_DOUBLE_EQ(f.algbw_GBps(), 2.0);
    EXPECT_DOUBLE_EQ(f.busbw_GBps(), 2.0);
    EXPECT_EQ(std::string(collective_name(Collective::reduce_scatter)), "reduce_scatter");
    EXPECT_EQ(collective_named("all_to_all"), Collective::all_to_all);
    EXPECT_FALSE(collective_named("allreduce"));
}

namespace {

Layout two_hosts() { return {{"a", "b"}, {{0, 1, 2}, {3, 4}}}; }

PairSamples pair(const std::string& tier, int src, int dst, double GBps, double us) {
    return {tier, src, dst, {GBps, GBps}, {us, us}};
}

}  // namespace

TEST(ClusterFabric, PairScheduleRingsPerNodeThenAcrossNodes) {
    std::vector<std::string> got;
    for (const auto& p : pair_schedule(two_hosts())) got.push_back(p.tier.substr(0, 5) + " " + std::to_string(p.src) + ">" + std::to_string(p.dst));
    const std::vector<std::string> want = {"intra 0>1", "intra 1>2", "intra 2>0", "intra 3>4", "intra 4>3",
                                           "inter 0>3", "inter 3>0", "inter 1>4", "inter 4>1"};
    EXPECT_EQ(got, want);
    EXPECT_TRUE(pair_schedule({{"solo"}, {{0}}}).empty());
    EXPECT_EQ(two_hosts().host_of(4), 1);
    EXPECT_EQ(two_hosts().host_of(9), -1);
}

TEST(ClusterFabric, SlowLinkAndSlowNodeAreNamed) {
    ClusterInput in;
    in.launcher = "openmpi";
    in.transport = "MPI (test)";
    in.world_size = 5;
    in.layout = two_hosts();
    for (int r = 0; r < 5; ++r) in.fabric.push_back(RankFabric{r, {}, {}, ""});
    in.fabric[0].sends = {pair("intra_node", 0, 1, 10, 2), pair("inter_node", 0, 3, 5, 4)};
    in.fabric[1].sends = {pair("intra_node", 1, 2, 1.0, 20), pair("inter_node", 1, 4, 5.2, 4)};  // rank 1: 10x slower
    in.fabric[2].sends = {pair("intra_node", 2, 0, 9.5, 2)};
    in.fabric[3].sends = {pair("intra_node", 3, 4, 10.5, 2), pair("inter_node", 3, 0, 4.9, 4)};
    in.fabric[4].sends = {pair("intra_node", 4, 3, 10.2, 2), pair("inter_node", 4, 1, 5.1, 4)};
    nlohmann::json fast = {{"host", {{"memory_bandwidth_GBps", 100.0}, {"fp32_tflops", 2.0}}},
                           {"pcie", nlohmann::json::array()}};
    nlohmann::json slow = {{"host", {{"memory_bandwidth_GBps", 60.0}, {"fp32_tflops", 2.0}}},
                           {"pcie", {{{"address", "0000:18:00.0"}, {"kind", "nic"}, {"downtrained", true}, {"gen", 4},
                                      {"width", 8}, {"max_gen", 5}, {"max_width", 16}}}}};
    in.nodes = {{"a", 0, fast, ""}, {"b", 3, slow, ""}};
    const ClusterSummary s = analyse_cluster(in);
    ASSERT_EQ(s.tiers.size(), 2u);
    EXPECT_EQ(s.tiers[0].tier, "intra_node");
    EXPECT_DOUBLE_EQ(s.tiers[0].p2p_GBps.median, 10.0);
    EXPECT_DOUBLE_EQ(s.tiers[0].p2p_GBps.min, 1.0);
    EXPECT_EQ(s.tiers[0].p2p_GBps.min_at, "rank 1 (a) -> rank 2 (a), intra_node");
    EXPECT_DOUBLE_EQ(s.tiers[1].p2p_GBps.median, 5.05);
    std::vector<std::string> named;
    for (const auto& o : s.outliers) named.push_back(o.node + "/" + std::to_string(o.rank) + "/" + o.figure);
    // Rank 1's round trips are slow only on its link to rank 2 (its best link is fine): not a latency outlier.
    const std::vector<std::string> want = {"a/1/p2p_GBps", "b/3/pcie_link_GBps", "b/3/host.memory_bandwidth_GBps"};
    EXPECT_EQ(named, want);
    EXPECT_DOUBLE_EQ(s.outliers[0].measured, 1.0);
    EXPECT_DOUBLE_EQ(s.outliers[0].expected, 10.1);  // median of the other four intra-node links
    EXPECT_NEAR(s.outliers[1].measured, 15.75, 0.01);  // gen4 x8
    EXPECT_NEAR(s.outliers[1].expected, 63.02, 0.01);  // gen5 x16
    EXPECT_DOUBLE_EQ(s.node_figures.at("host.memory_bandwidth_GBps").median, 80.0);
    const std::string text = to_text(s, in);
    EXPECT_NE(text.find("rank 1 (a) -> rank 2 (a), intra_node: p2p_GBps 1 GB/s vs 10.1 expected"), std::string::npos) << text;
}

TEST(ClusterFabric, SlowRankOfARingIsTheLatencyOutlier) {
    // Rank 2 delays its sends: its own stream is slow, and both round trips it takes part in.
    ClusterInput in;
    in.world_size = 4;
    in.layout = {{"a"}, {{0, 1, 2, 3}}};
    in.fabric = {RankFabric{0, {pair("intra_node", 0, 1, 5, 10)}, {}, ""}, RankFabric{1, {pair("intra_node", 1, 2, 4.5, 900)}, {}, ""},
                 RankFabric{2, {pair("intra_node", 2, 3, 0.4, 950)}, {}, ""}, RankFabric{3, {pair("intra_node", 3, 0, 5.5, 11)}, {}, ""}};
    std::vector<std::string> named;
    for (const auto& o : analyse_cluster(in).outliers) named.push_back(std::to_string(o.rank) + "/" + o.figure);
    EXPECT_EQ(named, (std::vector<std::string>{"2/p2p_GBps", "2/latency_us"}));
    // Two links (one pair of ranks) name no outlier: the pair cannot tell which end is slow.
    in.layout = {{"a"}, {{0, 1}}};
    in.fabric = {RankFabric{0, {pair("intra_node", 0, 1, 5, 10)}, {}, ""}, RankFabric{1, {pair("intra_node", 1, 0, 0.5, 900)}, {}, ""}};
    EXPECT_TRUE(analyse_cluster(in).outliers.empty());
}

TEST(ClusterFabric, CollectivesNeedEveryRank) {
    ClusterInput in;
    in.world_size = 2;
    in.layout = {{"a"}, {{0, 1}}};
    in.fabric = {RankFabric{0, {}, {{Collective::all_gather, 8e6, {0.002, 0.004}}}, ""},
                 RankFabric{1, {}, {{Collective::all_gather, 8e6, {0.002, 0.004}}, {Collective::all_to_all, 8e6, {0.01}}}, "x"}};
    const ClusterSummary s = analyse_cluster(in);
    ASSERT_EQ(s.collectives.size(), 1u);  // rank 0 has no all-to-all
    EXPECT_DOUBLE_EQ(s.collectives[0].median_seconds(), 0.003);
    EXPECT_NEAR(s.collectives[0].busbw_GBps(), 8e6 / 0.003 / 1e9 * 0.5, 1e-12);
    ASSERT_EQ(s.notes.size(), 1u);
    EXPECT_NE(s.notes[0].find("rank 1 (a) stopped measuring the fabric: x"), std::string::npos);
}

namespace {

std::string node_yaml(const std::string& host, double bw, double fp32) {
    probe::ProbeReport r;
    r.hostname = host;
    r.host.cpu_model = "Test CPU";
    r.host.vendor = "amd";
    r.host.sockets = 1;
    r.host.cores = 16;
    r.host.logical_cpus = 32;
    r.host.numa_nodes = 1;
    r.host.numa_node_socket = {0};
    r.host.memory_bytes = 64.0 * 1024 * 1024 * 1024;
    r.host_bench.memory_bandwidth_GBps = probe::measurement_of({bw});
    r.host_bench.fp32 = probe::GemmRate{probe::measurement_of({fp32}), "blas sgemm", 2048};
    r.host_bench.bf16 = probe::GemmRate{probe::measurement_of({fp32 / 4}), "bf16 converted to fp32 + blas sgemm", 2048};
    return probe::to_system_yaml(r);
}

}  // namespace

TEST(ClusterFile, TypicalNodeInterNodeAndPlannerTakesIt) {
    ClusterInput in;
    in.launcher = "slurm";
    in.transport = "MPI (Open MPI v4.1.4)";
    in.world_size = 3;
    in.layout = {{"n1", "n2", "n3"}, {{0}, {1}, {2}}};
    in.nodes = {{"n1", 0, nlohmann::json::object(), node_yaml("n1", 100, 1.0)},
                {"n2", 1, nlohmann::json::object(), node_yaml("n2", 60, 1.2)},
                {"n3", 2, nlohmann::json::object(), node_yaml("n3", 90, 0.9)}};
    for (int r = 0; r < 3; ++r) in.fabric.push_back(RankFabric{r, {pair("inter_node", r, (r + 1) % 3, 10.0 + r, 5 + r)}, {}, ""});
    const ClusterSummary s = analyse_cluster(in);
    const std::string text = cluster_system_yaml(in, s);
    YAML::Node y = YAML::Load(text);
    EXPECT_EQ(y["name"].as<std::string>(), "probed-cluster-n1-3-nodes");
    EXPECT_DOUBLE_EQ(y["cpu"]["memory_bandwidth_GBps"].as<double>(), 90);  // median of 100, 60, 90
    EXPECT_DOUBLE_EQ(y["cpu"]["tflops"]["fp32"].as<double>(), 1.0);
    EXPECT_DOUBLE_EQ(y["inter_node"]["bandwidth_GBps"].as<double>(), 11);
    EXPECT_DOUBLE_EQ(y["inter_node"]["latency_us"].as<double>(), 6);
    EXPECT_EQ(y["cluster"]["nodes"].as<int>(), 3);
    EXPECT_EQ(y["cluster"]["tiers"]["inter_node"]["p2p_GBps"]["count"].as<int>(), 3);
    EXPECT_EQ(measured_field_path("links.gpu0-cpu0.bandwidth_GBps"),
              (std::vector<std::string>{"links", "gpu0-cpu0", "link", "bandwidth_GBps"}));
    EXPECT_TRUE(measured_field_path("power.psu_count").empty());

    const std::string path = ::testing::TempDir() + "cluster_file_test_" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(path) << text;
    const SystemSpec sys = Catalog::instance().system(path, {"job.yaml", "hardware.system"});
    EXPECT_TRUE(sys.cpu_only);
    EXPECT_DOUBLE_EQ(sys.inter_node.bandwidth_GBps, 11);
    EXPECT_DOUBLE_EQ(sys.device.memory_bandwidth_GBps, 90);
    EXPECT_GT(sys.device.peak_tflops.bf16, 0);
    std::filesystem::remove(path);
}
