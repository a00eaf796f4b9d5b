// Names as users type them (docs/job-file.md "model", "hardware"): HF ids of Instruct/Chat/-it variants and without
// their organisation resolve through the architecture they share; short system and GPU names resolve through the
// catalog's aliases; suggestions stay in the asked family and size.
#include <gtest/gtest.h>

#include <chrono>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "spec/catalog_names.hpp"
#include "spec/job_file.hpp"
#include "spec_test_util.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

int64_t params_of(const std::string& name) {
    spec_test::CliResult r = run_ftbound({"model", name, "--json"});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << describe(r);
    if (r.exit_code != 0) return -1;
    return nlohmann::json::parse(r.out)["params"]["total"].get<int64_t>();
}

// Exact totals from data/models/SOURCES.md (published figures), reached through the names users type.
TEST(SpecNames, VariantIdsCountLikeTheirArchitecture) {
    const std::map<std::string, int64_t> want = {
        {"meta-llama/Llama-3.1-8B-Instruct", 8030261248},
        {"Llama-3.1-8B", 8030261248},
        {"meta-llama/llama-3.1-8b-instruct", 8030261248},
        {"Qwen/Qwen2.5-14B-Instruct", 14770033664},
        {"Qwen/Qwen2.5-7B-Instruct", 7615616512},
        {"google/gemma-3-12b-it", 12187325040},
        {"gemma-3-1b-it", 999885952},
        {"meta-llama/Llama-2-7b-chat-hf", 6738415616},
        {"llama3-8b", 8030261248},                       // Meta-Llama-3-8B: words in front of the name
        {"Meta-Llama-3.1-8B-Instruct", 8030261248},      // torchtune's download folder name
        {"mistralai/Mistral-7B-Instruct-v0.1", 7241732096},
        {"microsoft/phi-4", 14659507200},
        {"Qwen/Qwen3-30B-A3B", 30532122624},
        {"deepseek-ai/DeepSeek-V3", 671026419200},
        {"meta-llama/Llama-3.3-70B-Instruct", 70553706496},
        {"microsoft/Phi-3.5-mini-instruct", 3821079552},
    };
    for (const auto& [name, total] : want) EXPECT_EQ(params_of(name), total) << name;
}

// spec_reader_fuzz: an unknown model name of thousands of characters spent seconds on edit distances to every
// catalog name for its suggestions. The distance is at least the length difference, so those are skipped now; with
// 100,000 characters the old way took minutes.
TEST(SpecNames, LongUnknownNameFailsFast) {
    const std::string name(100000, 'L');
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& asked : {name, name + "-7b", "meta-llama/" + name})
        EXPECT_THROW(ftb::Catalog::instance().model(asked, {"job.yaml", "model"}), ftb::InputError);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
    // Suggestions for names of ordinary length are unchanged.
    EXPECT_EQ(ftb::did_you_mean("hiden_size", {"hidden_size", "vocab_size"}), "hidden_size");
}

std::string job_with(const std::string& model, const std::string& hardware) {
    return spec_test::write_scratch("names_" + std::to_string(std::hash<std::string>{}(model + hardware)) + ".yaml",
                                    "model: " + model + "\ntrain: {method: lora, micro_batch: 1, seq_len: 1024, "
                                    "activation_checkpointing: full}\nhardware: " + hardware + "\n");
}

TEST(SpecNames, PlanAcceptsUsersNames) {
    for (const std::string model : {"meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-14B-Instruct", "google/gemma-3-12b-it"}) {
        spec_test::CliResult r = run_ftbound({"plan", job_with(model, "{system: r760xa}"), "--json"});
        ASSERT_EQ(r.exit_code, 0) << model << ": " << describe(r);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["model"], model);
        EXPECT_EQ(j["system"], "dell-poweredge-r760xa-4x-h100-pcie");
    }
    spec_test::CliResult r = run_ftbound({"plan", job_with("meta-llama/Llama-3.1-8B", "{system: r760xa}"), "--json",
                                          "--set", "hardware.system=xe9680"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(nlohmann::json::parse(r.out)["system"], "dell-poweredge-xe9680-8x-h100-sxm");
}

TEST(SpecNames, HardwareAliases) {
    const ftb::Catalog& cat = ftb::Catalog::instance();
    const ftb::InputSite site{"test", "hardware"};
    for (const std::string gpu : {"H100", "H100 SXM", "h100-80gb", "H100_SXM5", "h100 sxm"})
        EXPECT_EQ(cat.gpu(gpu, site).name, "h100-sxm") << gpu;
    EXPECT_EQ(cat.gpu("H100 PCIe", site).name, "h100-pcie");
    EXPECT_EQ(cat.gpu("RTX 4090", site).name, "rtx-4090");
    EXPECT_EQ(cat.gpu("A100 80GB", site).name, "a100-sxm-80gb");
    EXPECT_EQ(cat.system("xe9680", site).name, "dell-poweredge-xe9680-8x-h100-sxm");
    EXPECT_EQ(cat.system("PowerEdge XE9680", site).name, "dell-poweredge-xe9680-8x-h100-sxm");
    EXPECT_EQ(cat.system("r760xa", site).name, "dell-poweredge-r760xa-4x-h100-pcie");
    EXPECT_EQ(cat.system("DGX H100", site).name, "dgx-h100");
}

std::string error_of(const std::string& model) {
    try {
        ftb::Catalog::instance().model(model, {"job.yaml", "model"});
    } catch (const ftb::InputError& e) {
        return e.reason();
    }
    return "(resolved)";
}

TEST(SpecNames, SuggestionsStayInFamilyAndSize) {
    // The family has the asked size: only that size is suggested.
    EXPECT_EQ(error_of("Qwen/Qwen2.5-14B-GPTQ-Int4").find("(did you mean 'Qwen/Qwen2.5-14B'?)") != std::string::npos, true)
        << error_of("Qwen/Qwen2.5-14B-GPTQ-Int4");
    // The family lacks it: the nearest sizes of that family, nearest first.
    const std::string e13 = error_of("Qwen/Qwen2.5-13B");
    EXPECT_NE(e13.find("(did you mean 'Qwen/Qwen2.5-14B'"), std::string::npos) << e13;
    EXPECT_EQ(e13.find("72B"), std::string::npos) << e13;
    // Org-less and family spellings users type.
    // (llama-3-8b-gptq and llama-3-8b-awq now name the catalog's TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ / -AWQ: same
    // words without the organisation and variant; a format with no entry still leads to the base model.)
    EXPECT_NE(error_of("llama-3-8b-exl2").find("'meta-llama/Meta-Llama-3-8B'"), std::string::npos) << error_of("llama-3-8b-exl2");
    EXPECT_EQ(error_of("llama-3-8b-gptq"), "(resolved)");
    EXPECT_EQ(error_of("llama-3-8b-awq"), "(resolved)");
    EXPECT_NE(error_of("mistral-7b").find("'mistralai/Mistral-7B-v0.1'"), std::string::npos) << error_of("mistral-7b");
    EXPECT_NE(error_of("gemma-3-12b-qat").find("'google/gemma-3-12b-pt'"), std::string::npos) << error_of("gemma-3-12b-qat");
    // Unsized names fall back to the closest id.
    EXPECT_NE(error_of("meta-llama/Llama-3.1-8").find("(did you mean 'meta-llama/Llama-3.1-8B'?)"), std::string::npos);
}

TEST(SpecNames, GpuAndSystemSuggestions) {
    auto gpu_error = [](const std::string& n) {
        try {
            ftb::Catalog::instance().gpu(n, {"job.yaml", "hardware.gpu"});
        } catch (const ftb::InputError& e) {
            return e.reason();
        }
        return std::string("(resolved)");
    };
    EXPECT_NE(gpu_error("h100-sxm5-94gb").find("'h100-sxm'"), std::string::npos) << gpu_error("h100-sxm5-94gb");
    EXPECT_NE(gpu_error("H20").find("did you mean"), std::string::npos);
}

// Every catalog name must stay reachable: no two models share a key, no alias names two entries.
TEST(SpecNames, KeysAndAliasesAreUnique) {
    const ftb::Catalog& cat = ftb::Catalog::instance();
    std::map<std::string, std::string> keys;
    for (const auto& n : cat.names("models")) {
        const auto [it, fresh] = keys.emplace(ftb::model_key(n), n);
        EXPECT_TRUE(fresh) << n << " and " << it->second << " share the key " << it->first;
    }
    for (const std::string section : {"gpus", "cpus", "systems", "links", "networks"}) {
        std::map<std::string, std::string> seen;
        for (const auto& n : cat.names(section)) seen.emplace(ftb::folded_name(n), n);
        for (const auto& n : cat.names(section))
            for (const auto& a : cat.aliases_of(section, n)) {
                const auto [it, fresh] = seen.emplace(ftb::folded_name(a), n);
                EXPECT_TRUE(fresh || it->second == n) << section << ": alias '" << a << "' of " << n << " also names " << it->second;
            }
    }
}

TEST(SpecNames, ModelNameParts) {
    EXPECT_EQ(ftb::model_key("meta-llama/Llama-3.1-8B-Instruct"), "llama-3.1-8-b");
    EXPECT_EQ(ftb::model_key("google/gemma-3-12b-it"), ftb::model_key("google/gemma-3-12b-pt"));
    const auto q = ftb::model_name_parts("Qwen/Qwen2.5-14B-Instruct");
    EXPECT_EQ(q.family, "qwen-2.5");
    EXPECT_DOUBLE_EQ(q.size, 14e9);
    const auto mx = ftb::model_name_parts("mistralai/Mixtral-8x7B-v0.1");
    EXPECT_EQ(mx.family, "mixtral");
    EXPECT_DOUBLE_EQ(mx.size, 56e9);
    EXPECT_EQ(mx.size_label, "8x7b");
    EXPECT_DOUBLE_EQ(ftb::model_name_parts("Qwen/Qwen2.5-0.5B").size, 0.5e9);
    EXPECT_DOUBLE_EQ(ftb::model_name_parts("facebook/opt-125m").size, 125e6);
    EXPECT_EQ(ftb::folded_name("H100 SXM5_80GB"), "h100-sxm5-80gb");
}

}  // namespace
