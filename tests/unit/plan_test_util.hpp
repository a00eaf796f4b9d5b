// Helpers for the memory / plan / compare / recommendation tests: a tiny inline Llama job built in memory,
// the real catalog example jobs, and JSON checks on `ftbound plan --json` output.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "spec/document.hpp"
#include "spec/job_file.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace plan_test {

// Llama family, hidden 64, 2 layers, 4 heads (head_dim 16), 2 kv heads, FFN 128, vocab 1000, untied head.
// Parameters (worked out by hand, HF LlamaForCausalLM layout):
//   embedding 1000*64 = 64,000; lm_head 64,000; final RMSNorm 64
//   per block: q 64*64 = 4,096, k 64*32 = 2,048, v 2,048, o 4,096 (attention 12,288)
//              gate/up/down 3*64*128 = 24,576; two RMSNorms 128  -> 36,992
//   total = 64,000 + 64,000 + 64 + 2*36,992 = 202,048
inline constexpr double kTinyParams = 202048;
inline constexpr double kTinyBlockParams = 36992;
inline constexpr double kTinyBlockLinearParams = 36864;   // attention + FFN matrices of one block
inline constexpr double kMiB = 1048576;
// PyTorch cuBLAS workspace on Hopper (":4096:8" = 32 MiB), H100 catalog CUDA context (512 MiB),
// generic framework NCCL buffers per communicator (288 MiB): data/devices/gpus/h100-sxm.yaml,
// data/frameworks/generic.yaml, src/memory/memory_model.cpp.
inline constexpr double kHopperCublasBytes = 32 * kMiB;
inline constexpr double kH100ContextBytes = 512 * kMiB;
inline constexpr double kGenericNcclBytes = 288 * kMiB;

// Full fine-tune, pure bf16, AdamW, micro-batch 1 x 8 tokens, one H100 SXM, generic framework.
inline ftb::Json tiny_job_document(int gpus = 1) {
    return ftb::Json::parse(R"({
      "model": {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
                "tie_word_embeddings": false},
      "train": {"method": "full", "precision": "bf16", "weights": "pure", "optimizer": "adamw",
                "micro_batch": 1, "global_batch": )" + std::to_string(gpus) + R"(, "seq_len": 8,
                "activation_checkpointing": "none", "attention": "flash", "loss": "standard",
                "framework": "generic"},
      "parallel": {"dp": "auto", "zero": 0},
      "hardware": {"gpu": "h100-sxm", "gpus_per_node": )" + std::to_string(gpus) + R"(}
    })");
}

// `ftbound plan ARGS --json`, parsed; a failed run is a test failure and an empty object.
inline ftb::Json plan_json(std::vector<std::string> args) {
    args.insert(args.begin(), "plan");
    args.push_back("--json");
    const auto r = spec_test::run_ftbound(args);
    EXPECT_EQ(r.exit_code, 0) << spec_test::describe(r);
    return r.exit_code == 0 ? ftb::Json::parse(r.out) : ftb::Json::object();
}

inline ftb::Job tiny_job(const std::vector<std::pair<std::string, std::string>>& sets = {}, int gpus = 1) {
    ftb::Json doc = tiny_job_document(gpus);
    for (const auto& [key, value] : sets) ftb::apply_override(doc, key + "=" + value, "tiny.yaml");
    return ftb::job_from_document(doc, "tiny.yaml");
}

inline std::string example(const std::string& name) { return std::string(ftb_test::source_dir()) + "/examples/" + name; }
inline std::string plan_data(const std::string& name) { return std::string(ftb_test::test_data()) + "/plan/" + name; }

inline const std::vector<std::string>& resource_vocabulary() {
    static const std::vector<std::string> v = {"compute", "memory_bandwidth", "memory_capacity", "pcie",
                                               "gpu_interconnect", "network", "host_memory", "host_cpu",
                                               "storage", "launch_overhead", "pipeline_bubble", "data_loading",
                                               "power"};
    return v;
}

inline bool in_vocabulary(const std::string& r) {
    for (const auto& v : resource_vocabulary())
        if (v == r) return true;
    return false;
}

// Every number in the document is finite (nlohmann prints NaN/inf as null, so a null where a number belongs is
// caught by the key checks; this catches anything that slipped through as a parsed number).
inline void expect_all_finite(const ftb::Json& j, const std::string& path = "") {
    if (j.is_number_float()) {
        EXPECT_TRUE(std::isfinite(j.get<double>())) << path;
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) expect_all_finite(it.value(), path + "." + it.key());
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) expect_all_finite(j[i], path + "[" + std::to_string(i) + "]");
    }
}

// `dotted` (a.b.c) is present and a finite number.
inline void expect_number(const ftb::Json& j, const std::string& dotted) {
    const ftb::Json* cur = &j;
    size_t start = 0;
    while (start <= dotted.size()) {
        const size_t dot = dotted.find('.', start);
        const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        ASSERT_TRUE(cur->is_object() && cur->contains(key)) << "missing key " << dotted;
        cur = &(*cur)[key];
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    ASSERT_TRUE(cur->is_number()) << dotted << " = " << cur->dump();
    EXPECT_TRUE(std::isfinite(cur->get<double>())) << dotted;
}

}  // namespace plan_test
