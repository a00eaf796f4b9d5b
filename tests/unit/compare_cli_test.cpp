// `ftbound compare JOB --hardware A,B,...` (CONTRACT.md "compare --json"): one row per system in the order
// given with the plan keys, the text form one aligned table, and user errors as exit 2.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;

const std::vector<std::string> kSystems = {"dell-poweredge-xe9680-8x-h100-sxm", "dell-poweredge-r760xa-4x-h100-pcie",
                                           "dell-poweredge-r760-2x-xeon-8480"};
const std::string kSystemList = "dell-poweredge-xe9680-8x-h100-sxm,dell-poweredge-r760xa-4x-h100-pcie,"
                                "dell-poweredge-r760-2x-xeon-8480";

TEST(CompareCli, JsonRowsInOrderWithPlanKeys) {
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    const auto r = run_ftbound({"compare", job, "--hardware", kSystemList, "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const Json j = Json::parse(r.out);
    ASSERT_TRUE(j.contains("rows"));
    ASSERT_EQ(j["rows"].size(), kSystems.size());
    for (size_t i = 0; i < kSystems.size(); ++i) {
        const Json& row = j["rows"][i];
        SCOPED_TRACE(kSystems[i]);
        EXPECT_EQ(row["system"], kSystems[i]);
        ASSERT_FALSE(row.contains("error")) << row["error"].dump();
        for (const char* k : {"memory", "step", "throughput", "bottleneck", "time_to_train_seconds", "energy_kwh", "cost"})
            EXPECT_TRUE(row.contains(k)) << k;
        expect_number(row, "memory.device_used_bytes");
        ASSERT_TRUE(row["memory"]["fits"].is_boolean());
        expect_number(row, "step.seconds");
        expect_number(row, "throughput.tokens_per_second");
        EXPECT_TRUE(in_vocabulary(row["bottleneck"]["resource"].get<std::string>()));
        // The example has data.tokens: time, energy are numbers; cost needs a price for that kind of server.
        expect_number(row, "time_to_train_seconds");
        expect_number(row, "energy_kwh");
        EXPECT_TRUE(row["cost"].is_number() || row["cost"].is_null());
        double sum = 0;
        for (const Json& p : row["step"]["breakdown"]) sum += p["seconds"].get<double>();
        EXPECT_NEAR(sum, row["step"]["seconds"].get<double>(), 1e-9 * sum);
        expect_all_finite(row);
    }
    // GPU servers are priced per GPU-hour in this job; the CPU server has no GPU-hour price.
    EXPECT_TRUE(j["rows"][0]["cost"].is_number());
    EXPECT_TRUE(j["rows"][1]["cost"].is_number());
    // Eight SXM GPUs train this job faster than four PCIe GPUs, which beat two CPU sockets.
    const double t0 = j["rows"][0]["time_to_train_seconds"].get<double>();
    const double t1 = j["rows"][1]["time_to_train_seconds"].get<double>();
    const double t2 = j["rows"][2]["time_to_train_seconds"].get<double>();
    EXPECT_LT(t0, t1);
    EXPECT_LT(t1, t2);
}

TEST(CompareCli, RowEqualsPlanOnThatSystem) {
    // The compare row for the job's own system is the plan of the job.
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    const auto c = run_ftbound({"compare", job, "--hardware", "dell-poweredge-r760xa-4x-h100-pcie", "--json"});
    const auto p = run_ftbound({"plan", job, "--json"});
    ASSERT_EQ(c.exit_code, 0) << describe(c);
    ASSERT_EQ(p.exit_code, 0) << describe(p);
    const Json row = Json::parse(c.out)["rows"][0];
    const Json plan = Json::parse(p.out);
    for (const char* k : {"memory", "step", "throughput", "bottleneck", "time_to_train_seconds", "energy_kwh", "cost"})
        EXPECT_EQ(row[k], plan[k]) << k;
}

TEST(CompareCli, TextIsOneAlignedTable) {
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    const auto r = run_ftbound({"compare", job, "--hardware", kSystemList});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_GE(lines.size(), 2 + kSystems.size());
    // Header, a rule, then one row per system in order.
    EXPECT_EQ(lines[0].rfind("system", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1].find_first_not_of('-'), std::string::npos) << lines[1];
    const size_t width = lines[0].size();
    for (size_t i = 0; i < kSystems.size(); ++i) {
        const std::string& row = lines[2 + i];
        EXPECT_EQ(row.rfind(kSystems[i], 0), 0u) << row;
        EXPECT_EQ(row.size(), width) << "row not aligned with the header:\n" << lines[0] << "\n" << row;
    }
    // Aligned: every column header starts where its cells start (the second column: devices).
    const size_t devices_col = lines[0].find("devices");
    ASSERT_NE(devices_col, std::string::npos);
    for (size_t i = 0; i < kSystems.size(); ++i) {
        EXPECT_EQ(lines[2 + i][devices_col - 1], ' ');
        EXPECT_NE(lines[2 + i][devices_col], ' ') << lines[2 + i];
    }
    EXPECT_EQ(r.out.find("nan"), std::string::npos);
}

void expect_input_error(const std::vector<std::string>& args, const std::string& must_mention) {
    const auto r = run_ftbound(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << describe(r);
    EXPECT_TRUE(r.out.empty()) << joined << "\nstdout: " << r.out.substr(0, 400);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << joined << "\nstderr: " << r.err;
    EXPECT_NE(r.err.find(must_mention), std::string::npos) << joined << "\nstderr: " << r.err;
}

TEST(CompareCli, Errors) {
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error({"compare", job}, "--hardware");                                    // no --hardware
    expect_input_error({"compare", job, "--hardware"}, "--hardware");                      // no value
    expect_input_error({"compare", job, "--hardware", ""}, "--hardware");                  // empty list
    expect_input_error({"compare", job, "--hardware", ",,"}, "--hardware");                // only separators
    expect_input_error({"compare", job, "--hardware", "dgx-h100,no-such-server", "--json"}, "no-such-server");
    expect_input_error({"compare", job + ".missing", "--hardware", "dgx-h100"}, ".missing");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--set", "train.micro_batch"}, "train.micro_batch");
}

std::string compare_data(const std::string& name) { return std::string(ftb_test::test_data()) + "/compare/" + name; }

Json compare_json(std::vector<std::string> args) {
    args.insert(args.begin(), "compare");
    args.push_back("--json");
    const auto r = run_ftbound(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
}

TEST(CompareCli, GlobalBatchOfOneIsAdaptedPerSystem) {
    // The case: one sequence per step cannot be split over 4 GPUs or 2 sockets. Each system gets a row with
    // a step time, says what was adapted, and the CPU server is slower per step.
    const Json j = compare_json({compare_data("global-batch-1.yaml"), "--hardware",
                                 "dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480"});
    ASSERT_EQ(j["rows"].size(), 2u);
    for (const Json& row : j["rows"]) {
        SCOPED_TRACE(row["system"].get<std::string>());
        ASSERT_FALSE(row.contains("error")) << row["error"];
        expect_number(row, "step.seconds");
        ASSERT_TRUE(row["adapted"].is_array());
        EXPECT_FALSE(row["adapted"].empty());
        EXPECT_EQ(row["throughput"]["tokens_per_step"].get<double>(), 2048);
        expect_number(row, "cost_per_million_tokens");
        expect_number(row, "energy_kwh_per_million_tokens");
    }
    const Json& gpu = j["rows"][0];
    const Json& cpu = j["rows"][1];
    EXPECT_LT(gpu["step"]["seconds"].get<double>(), cpu["step"]["seconds"].get<double>());
    // The CPU server runs the one sequence on one of its two sockets.
    EXPECT_EQ(cpu["gpus"].get<int>(), 1);
    EXPECT_NE(cpu["adapted"][0].get<std::string>().find("uses 1 of 2 sockets"), std::string::npos) << cpu["adapted"];
    // Each system is priced from the catalog, with its source: not one price for all.
    EXPECT_NE(gpu["cost_detail"]["price"]["per_node_hour"], cpu["cost_detail"]["price"]["per_node_hour"]);
    EXPECT_FALSE(cpu["cost_detail"]["price"]["sources"].empty());
}

TEST(CompareCli, JobsOwnPriceStaysWithItsSystemAndPriceOverrides) {
    // The example prices its R760xa at 2.50 per GPU-hour: that row keeps it (10 per node-hour); the XE9680 takes
    // its catalog price; --price sets the CPU server's.
    const Json j = compare_json({example("llama3.1-8b-lora-r760xa.yaml"), "--hardware",
                                 "dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-xe9680-8x-h100-sxm,"
                                 "dell-poweredge-r760-2x-xeon-8480",
                                 "--price", "dell-poweredge-r760-2x-xeon-8480=3.5"});
    ASSERT_EQ(j["rows"].size(), 3u);
    EXPECT_DOUBLE_EQ(j["rows"][0]["cost_detail"]["price"]["per_node_hour"].get<double>(), 10);
    EXPECT_EQ(j["rows"][1]["cost_detail"]["price"]["basis"], "hourly list price");
    EXPECT_DOUBLE_EQ(j["rows"][2]["cost_detail"]["price"]["per_node_hour"].get<double>(), 3.5);
    // cost per million tokens = the whole job's cost / (2e8 tokens x 2 epochs) x 1e6.
    for (const Json& row : j["rows"])
        EXPECT_NEAR(row["cost_per_million_tokens"].get<double>(), row["cost"].get<double>() / 400.0,
                    1e-9 * row["cost"].get<double>());
}

TEST(CompareCli, NodesSweepAddsARowPerCount) {
    const Json j = compare_json({example("llama3.1-8b-lora-r760xa.yaml"), "--hardware",
                                 "dell-poweredge-xe9680-8x-h100-sxm,dell-poweredge-r760-2x-xeon-8480", "--nodes", "1,2"});
    ASSERT_EQ(j["rows"].size(), 4u);
    EXPECT_EQ(j["rows"][0]["nodes"], 1);
    EXPECT_EQ(j["rows"][1]["nodes"], 2);
    EXPECT_EQ(j["rows"][1]["gpus"], 16);
    EXPECT_EQ(j["rows"][3]["gpus"], 4);
    // Two nodes train the job in less time than one.
    EXPECT_LT(j["rows"][1]["time_to_train_seconds"].get<double>(), j["rows"][0]["time_to_train_seconds"].get<double>());
}

TEST(CompareCli, FewerDevicesPerNodeAreAnyCountThatSplitsTheBatch) {
    // A batch of 16 on NVL72 racks (72 GPUs per node): no power-of-two share of 72 splits it, 16 and 8 do. Every
    // node count gets a row that runs, and says what it used.
    const Json j = compare_json({example("llama3.1-8b-lora-rtx4090.yaml"), "--hardware", "gb200-nvl72", "--nodes", "1,2"});
    ASSERT_EQ(j["rows"].size(), 2u);
    for (int i = 0; i < 2; ++i) {
        const Json& row = j["rows"][i];
        ASSERT_FALSE(row.contains("error")) << row["error"];
        EXPECT_EQ(row["gpus"], 16);
        EXPECT_NE(row["adapted"][0].get<std::string>().find(i == 0 ? "uses 16 of 72 GPUs" : "uses 8 of 72 GPUs"),
                  std::string::npos)
            << row["adapted"];
    }
}

TEST(CompareCli, CsvHasAHeaderAndARowPerSystem) {
    const auto r = run_ftbound({"compare", compare_data("global-batch-1.yaml"), "--hardware",
                                "dell-poweredge-r760xa-4x-h100-pcie,dell-poweredge-r760-2x-xeon-8480", "--csv"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 3u) << r.out;
    EXPECT_EQ(lines[0].rfind("system,nodes,devices,fits,", 0), 0u) << lines[0];
    EXPECT_EQ(lines[2].rfind("dell-poweredge-r760-2x-xeon-8480,1,1,true,", 0), 0u) << lines[2];
}

TEST(CompareCli, SweepAndPriceErrors) {
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--nodes", "0"}, "--nodes");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--nodes", "1,x"}, "--nodes");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--price", "dgx-h100"}, "--price");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--price", "dgx-h100=-1"}, "--price");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--price", "hgx-h100-8x=3"}, "not one of the --hardware");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--json", "--csv"}, "--csv");
}

TEST(CompareCli, JobErrorsAreInputErrorsNotRows) {
    // A mistake in the job itself (here a typo given with --set) is the same on every system: bad input, exit 2,
    // not a table of per-system error rows with exit 0.
    const std::string job = example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error({"compare", job, "--hardware", "dgx-h100,hgx-h100-8x", "--set", "train.micro_bach=3"},
                       "micro_bach");
    expect_input_error({"compare", job, "--hardware", "dgx-h100", "--json", "--set", "train.method=dora"},
                       "train.method");
}

}  // namespace
}  // namespace ftb
