// `ftbound catalog [section] [--json]`: every section prints, `--json` is one parseable document holding
// the names CONTRACT.md "Catalog names that must resolve" promises, and a bad section is exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>

#include "spec_test_util.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

const std::vector<std::string> kSections = {"models", "gpus", "cpus", "systems", "networks", "links", "frameworks"};

std::set<std::string> names_in(const nlohmann::json& arr) {
    std::set<std::string> s;
    for (auto& e : arr) s.insert(e["name"].get<std::string>());
    return s;
}

// CONTRACT.md "Catalog names that must resolve".
const std::map<std::string, std::vector<std::string>> kContractNames = {
    {"gpus", {"v100-sxm-32gb", "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie",
              "h100-nvl", "h200-sxm", "h200-nvl", "gh200", "b200", "gb200", "l40s", "l4", "rtx-3090", "rtx-4090",
              "rtx-a6000", "mi300x", "mi325x", "gaudi3"}},
    {"cpus", {"xeon-8480", "xeon-8592", "xeon-6980p", "epyc-9654", "epyc-9755"}},
    {"links", {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "pcie6", "xgmi", "none"}},
    {"networks", {"eth-25g", "eth-100g", "roce-100", "roce-200", "roce-400", "ib-hdr-200", "ib-ndr-400", "ib-xdr-800"}},
    {"systems", {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "hgx-h100-8x", "hgx-h200-8x",
                 "dell-poweredge-xe9680-8x-h100-sxm", "dell-poweredge-xe9680-8x-h200-sxm",
                 "dell-poweredge-xe8640-4x-h100-sxm", "dell-poweredge-r760xa-4x-h100-pcie",
                 "dell-poweredge-r750xa-4x-a100-pcie", "dell-poweredge-r760-2x-xeon-8480"}},
    {"models", {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf", "meta-llama/Llama-2-70b-hf",
                "meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-70B", "meta-llama/Llama-3.1-8B",
                "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.2-1B",
                "meta-llama/Llama-3.2-3B", "mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "Qwen/Qwen2.5-7B",
                "Qwen/Qwen2.5-72B", "google/gemma-2-9b", "microsoft/phi-2", "microsoft/Phi-3-mini-4k-instruct",
                "tiiuae/falcon-7b", "mosaicml/mpt-7b", "stabilityai/stablelm-3b-4e1t", "bigscience/bloomz-7b1",
                "openai-community/gpt2"}},
    {"frameworks", {"generic", "hf", "deepspeed", "deepspeed-0.8", "megatron", "nemo", "torchtitan", "torchtune", "llm-foundry", "litgpt",
                    "unsloth", "axolotl", "llama-factory"}},
};

TEST(SpecCatalogCli, AllSectionsJson) {
    spec_test::CliResult r = run_ftbound({"catalog", "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(r.err.empty()) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);   // throws (fails) on anything but one document
    for (const auto& s : kSections) {
        ASSERT_TRUE(j.contains(s)) << s;
        EXPECT_FALSE(j[s].empty()) << s;
    }
    for (const auto& [section, names] : kContractNames) {
        const auto have = names_in(j[section]);
        for (const auto& n : names) EXPECT_TRUE(have.count(n)) << section << " lacks contract name " << n;
    }
    // Numbers a reader can rely on: every model has a positive count, every GPU memory and bandwidth.
    for (auto& m : j["models"]) EXPECT_GT(m["params"].get<int64_t>(), 0) << m["name"];
    for (auto& g : j["gpus"]) {
        EXPECT_GT(g["memory_bytes"].get<double>(), 0) << g["name"];
        EXPECT_GT(g["memory_bandwidth_GBps"].get<double>(), 0) << g["name"];
    }
    for (auto& n : j["networks"]) EXPECT_GT(n["bandwidth_GBps"].get<double>(), 0) << n["name"];
}

TEST(SpecCatalogCli, EachSection) {
    spec_test::CliResult all = run_ftbound({"catalog", "--json"});
    ASSERT_EQ(all.exit_code, 0);
    const nlohmann::json whole = nlohmann::json::parse(all.out);
    for (const auto& s : kSections) {
        SCOPED_TRACE(s);
        spec_test::CliResult js = run_ftbound({"catalog", s, "--json"});
        ASSERT_EQ(js.exit_code, 0) << describe(js);
        const nlohmann::json j = nlohmann::json::parse(js.out);
        ASSERT_EQ(j.size(), 1u) << "only the asked section";
        EXPECT_EQ(j[s], whole[s]);
        spec_test::CliResult text = run_ftbound({"catalog", s});
        ASSERT_EQ(text.exit_code, 0) << describe(text);
        EXPECT_EQ(text.out.rfind(s + " (" + std::to_string(j[s].size()) + " in ", 0), 0u) << text.out.substr(0, 200);
        for (auto& e : j[s]) EXPECT_NE(text.out.find(e["name"].get<std::string>()), std::string::npos) << e["name"];
    }
}

TEST(SpecCatalogCli, BadSection) {
    struct Bad { std::vector<std::string> args; std::string reason; };
    for (const Bad& b : {Bad{{"catalog", "gpu"}, "unknown section 'gpu' (did you mean 'gpus'?)"},
                         Bad{{"catalog", "gpu", "--json"}, "unknown section 'gpu'"},
                         Bad{{"catalog", "everything"}, "unknown section 'everything'"},
                         Bad{{"catalog", "models", "gpus"}, "not expected"}}) {
        spec_test::CliResult r = run_ftbound(b.args);
        const std::string label = b.args[1];
        EXPECT_EQ(r.exit_code, 2) << label << ": " << describe(r);
        EXPECT_TRUE(r.out.empty()) << label;
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(b.reason), std::string::npos) << r.err;
    }
}

// With FTBOUND_DATA pointing at an empty folder every section is empty (not an error, not a crash).
TEST(SpecCatalogCli, CatalogFolderFromEnvironment) {
    const std::string empty = spec_test::scratch_dir() + "/empty_data";
    std::filesystem::create_directories(empty);
    setenv("FTBOUND_DATA", empty.c_str(), 1);
    spec_test::CliResult r = run_ftbound({"catalog", "--json"});
    unsetenv("FTBOUND_DATA");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    for (const auto& s : kSections) EXPECT_TRUE(j[s].empty()) << s;
}

}  // namespace
