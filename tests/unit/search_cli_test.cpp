// `ftbound search` from the command line (CONTRACT.md "search --json"): the JSON keys, the job document that
// reproduces the best configuration, CSV and text, empty answers (exit 0) and malformed flags (exit 2).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;
using spec_test::describe;
using spec_test::run_ftbound;
using spec_test::write_scratch;

const std::string kJob = R"(model: meta-llama/Llama-3.2-1B
train: {method: full, micro_batch: 1, global_batch: 32, seq_len: 2048, framework: generic}
parallel: {dp: auto, zero: 0}
hardware: {system: hgx-h100-8x, inter_node: ib-ndr-400}
data: {tokens: 1.0e8, epochs: 1}
ops: {price_per_gpu_hour: 2.0}
)";

std::string job_file() { return write_scratch("search/llama1b.yaml", kJob); }

Json search_json(std::vector<std::string> args) {
    args.insert(args.begin(), {"search", job_file()});
    args.push_back("--json");
    const auto r = run_ftbound(args, 120);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(r.err.empty()) << r.err;   // not a terminal: no progress line
    return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
}

void expect_config(const Json& c) {
    for (const char* k : {"system", "nodes", "gpus", "changes", "job", "memory", "step", "throughput", "bottleneck",
                          "time_to_train_seconds", "cost", "energy_kwh"})
        EXPECT_TRUE(c.contains(k)) << k;
    expect_number(c, "step.seconds");
    expect_number(c, "memory.device_used_bytes");
    expect_number(c, "time_to_train_seconds");
    expect_number(c, "cost");
    EXPECT_TRUE(c["memory"]["fits"].get<bool>());
    EXPECT_TRUE(in_vocabulary(c["bottleneck"]["resource"].get<std::string>()));
}

TEST(SearchCli, JsonKeysOfTheContract) {
    const Json j = search_json({"--nodes", "1-2", "--top", "3"});
    for (const char* k : {"evaluated", "feasible", "best", "top", "front", "bound_by"}) ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_GT(j["evaluated"].get<int64_t>(), 0);
    EXPECT_GT(j["feasible"].get<int64_t>(), 0);
    EXPECT_LE(j["feasible"].get<int64_t>(), j["evaluated"].get<int64_t>());
    EXPECT_TRUE(j["bound_by"].is_null());
    expect_config(j["best"]);
    ASSERT_EQ(j["top"].size(), 3u);
    EXPECT_EQ(j["top"][0]["changes"], j["best"]["changes"]);
    for (const Json& c : j["top"]) expect_config(c);
    EXPECT_TRUE(j["top"][0].contains("why"));
    ASSERT_FALSE(j["front"].empty());
    for (const Json& c : j["front"]) expect_config(c);
    // Best first by time; the front runs from fastest to cheapest.
    EXPECT_LE(j["top"][0]["time_to_train_seconds"].get<double>(), j["top"][1]["time_to_train_seconds"].get<double>());
    const Json& f = j["front"];
    EXPECT_LE(f[0]["time_to_train_seconds"].get<double>(), f[f.size() - 1]["time_to_train_seconds"].get<double>());
    EXPECT_GE(f[0]["cost"].get<double>(), f[f.size() - 1]["cost"].get<double>());
    expect_all_finite(j);
}

TEST(SearchCli, BestJobDocumentPlansToTheSameStep) {
    const Json j = search_json({"--nodes", "1-2"});
    const std::string path = write_scratch("search/best.json", j["best"]["job"].dump());
    const Json plan = plan_json({path});
    ASSERT_TRUE(plan.contains("step"));
    EXPECT_DOUBLE_EQ(plan["step"]["seconds"].get<double>(), j["best"]["step"]["seconds"].get<double>());
    EXPECT_EQ(plan["gpus"].get<int64_t>(), j["best"]["gpus"].get<int64_t>());
}

TEST(SearchCli, SameJsonForOneAndTwoThreads) {
    Json a = search_json({"--nodes", "1-2", "--threads", "1"});
    Json b = search_json({"--nodes", "1-2", "--threads", "2"});
    for (Json* j : {&a, &b}) j->erase("search_seconds"), j->erase("threads");
    EXPECT_EQ(a.dump(), b.dump());
}

TEST(SearchCli, ImpossibleDeadlineIsAnAnswerNotAnError) {
    const Json j = search_json({"--deadline", "0.0001"});
    EXPECT_EQ(j["feasible"].get<int64_t>(), 0);
    EXPECT_TRUE(j["front"].empty());
    EXPECT_TRUE(j["top"].empty());
    EXPECT_TRUE(j["best"].is_null());
    ASSERT_TRUE(j["bound_by"].is_object());
    EXPECT_EQ(j["bound_by"]["constraint"], "deadline");
    EXPECT_NE(j["bound_by"]["reason"].get<std::string>().find("deadline"), std::string::npos);
    expect_config(j["bound_by"]["nearest"]);
}

TEST(SearchCli, NothingFitsNamesMemory) {
    const std::string path = write_scratch("search/70b-4090.yaml", R"(model: meta-llama/Llama-3.1-70B
train: {method: full, micro_batch: 1, global_batch: 4, seq_len: 2048}
hardware: {gpu: rtx-4090, gpus_per_node: 1}
)");
    const auto r = run_ftbound({"search", path});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("nothing feasible: bound by memory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nearest"), std::string::npos) << r.out;
}

TEST(SearchCli, TextAndCsv) {
    const auto t = run_ftbound({"search", job_file(), "--top", "2"}, 120);
    ASSERT_EQ(t.exit_code, 0) << describe(t);
    EXPECT_NE(t.out.find("why each wins over the next"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("best: "), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("Pareto front"), std::string::npos) << t.out;
    const auto c = run_ftbound({"search", job_file(), "--top", "2", "--csv"}, 120);
    ASSERT_EQ(c.exit_code, 0) << describe(c);
    EXPECT_EQ(c.out.rfind("list,rank,system,nodes,gpus,tp,pp,cp,dp", 0), 0u) << c.out;
    EXPECT_NE(c.out.find("\ntop,1,hgx-h100-8x,"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("\ntop,2,"), std::string::npos) << c.out;
    EXPECT_NE(c.out.find("\nfront,1,"), std::string::npos) << c.out;
}

TEST(SearchCli, MalformedFlagsExitTwo) {
    const std::string job = job_file();
    const std::vector<std::vector<std::string>> cases = {
        {"--nodes", "0"},          {"--nodes", "5-2"},       {"--nodes", "x"},        {"--nodes", "1-"},
        {"--objective", "speed"},  {"--top", "0"},           {"--top", "2.5"},        {"--deadline", "-3"},
        {"--deadline", "soon"},    {"--budget", "0"},        {"--max-gpus", "0"},     {"--allow", "fp4"},
        {"--threads", "0"},        {"--hardware", "no-such-server"},
        {"--hardware", "dgx-h100", "--all-systems"},         {"--json", "--csv"},
    };
    for (const auto& extra : cases) {
        std::vector<std::string> args = {"search", job};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_ftbound(args);
        SCOPED_TRACE(extra.front() + " " + extra.back());
        EXPECT_EQ(r.exit_code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(SearchCli, ConstraintsThatNeedJobFields) {
    const std::string bare = write_scratch("search/bare.yaml", R"(model: meta-llama/Llama-3.2-1B
train: {method: full, micro_batch: 1, global_batch: 8, seq_len: 1024}
hardware: {system: hgx-h100-8x}
)");
    for (const auto& extra : std::vector<std::vector<std::string>>{
             {"--objective", "cost"}, {"--deadline", "10"}, {"--budget", "100"}}) {
        std::vector<std::string> args = {"search", bare};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_ftbound(args);
        SCOPED_TRACE(extra.front());
        EXPECT_EQ(r.exit_code, 2) << describe(r);
        EXPECT_NE(r.err.find(extra.front()), std::string::npos) << r.err;
    }
    // Without data.tokens the search still ranks (per optimizer step).
    const auto r = run_ftbound({"search", bare, "--top", "1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("per optimizer step"), std::string::npos) << r.out;
}

TEST(SearchCli, OtherServers) {
    const Json j = search_json({"--hardware", "hgx-h100-8x,dell-poweredge-r760xa-4x-h100-pcie", "--nodes", "1"});
    ASSERT_TRUE(j["best"].is_object());
    // Eight GPUs on NVSwitch beat four on PCIe for time; every shown configuration's job names its server.
    EXPECT_EQ(j["best"]["system"], "hgx-h100-8x");
    EXPECT_EQ(j["best"]["gpus"].get<int64_t>(), 8);
    for (const Json& c : j["front"]) EXPECT_EQ(c["job"]["hardware"]["system"], c["system"]);
    for (const Json& c : j["top"]) EXPECT_EQ(c["job"]["hardware"]["system"], c["system"]);
}

}  // namespace
}  // namespace ftb
