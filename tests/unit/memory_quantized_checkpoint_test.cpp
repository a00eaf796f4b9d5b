// Pre-quantised checkpoints (config.json quantization_config: AWQ, GPTQ, ModelOpt NVFP4) on the tiny inline Llama
// (plan_test_util.hpp: 2 blocks of 36,864 linear weights, 73,728 in all). Bytes per weight as cited in
// src/memory/training_setup.cpp: AWQ/GPTQ bits/8 + (2 + bits/8) / group; NVFP4 0.5 + 1/16; bitsandbytes NF4
// without double quantisation 0.5 + 4/64 = 0.5625.
#include <gtest/gtest.h>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "plan_test_util.hpp"
#include "spec/catalog.hpp"

namespace ftb {
namespace {

using namespace plan_test;

Job quantized_job(const std::string& quantization_config, const std::string& method = "lora") {
    Json doc = tiny_job_document();
    doc["model"]["quantization_config"] = Json::parse(quantization_config);
    doc["train"]["method"] = method;
    if (method == "lora") doc["train"]["lora"] = Json::parse(R"({"rank": 8})");
    return job_from_document(doc, "tiny.yaml");
}

double weights_at_loss(const Job& job) {
    MemoryWalk walk;
    plan_memory(job, &walk);
    for (const MemoryWalkPoint& p : walk.points)
        if (p.phase == MemoryPhase::loss) return p.live.weights_bytes;
    ADD_FAILURE() << "no loss point";
    return 0;
}

Job bnb_job() {
    return tiny_job({{"train.method", "qlora"}, {"train.lora.rank", "8"}, {"train.qlora.double_quant", "false"},
                     {"train.qlora.kernel", "bitsandbytes"}});
}

TEST(QuantizedCheckpoint, AwqLoraTrainsAdaptersOverTheAwqBase) {
    const Job j = quantized_job(R"({"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemm"})");
    EXPECT_EQ(j.spec.train.method, Method::qlora);
    EXPECT_EQ(j.spec.train.qlora.kernel, QloraKernel::awq);
    EXPECT_EQ(j.spec.train.qlora.group_size, 32);
    // 0.5 + 2.5/32 = 0.578125 B against NF4's 0.5625: 0.015625 x 73,728 = 1,152 B more.
    EXPECT_DOUBLE_EQ(weights_at_loss(j) - weights_at_loss(bnb_job()), 1152);
}

TEST(QuantizedCheckpoint, GptqUsesItsGroupSizeAndAutoGptq) {
    const Job j = quantized_job(R"({"quant_method": "gptq", "bits": 4, "group_size": 64, "desc_act": false})");
    EXPECT_EQ(j.spec.train.qlora.kernel, QloraKernel::auto_gptq);
    // 0.5 + 2.5/64 = 0.5390625 B: 0.0234375 x 73,728 = 1,728 B below NF4's 0.5625.
    EXPECT_DOUBLE_EQ(weights_at_loss(bnb_job()) - weights_at_loss(j), 1728);
}

TEST(QuantizedCheckpoint, Nvfp4StoresHalfAByteAndAnFp8ScalePer16) {
    const Job nvfp4 = quantized_job(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})");
    EXPECT_EQ(nvfp4.spec.train.qlora.kernel, QloraKernel::modelopt_nvfp4);
    // 0.5 + 1/16 = 0.5625 B, the same as NF4 without double quantisation.
    EXPECT_DOUBLE_EQ(weights_at_loss(nvfp4), weights_at_loss(bnb_job()));
}

TEST(QuantizedCheckpoint, FullTrainingOfAQuantisedBaseIsRefused) {
    try {
        quantized_job(R"({"quant_method": "awq", "bits": 4, "group_size": 128})", "full");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "train.method");
        EXPECT_NE(std::string(e.what()).find("pre-quantised (AWQ 4-bit"), std::string::npos) << e.what();
    }
}

TEST(QuantizedCheckpoint, FormatsItCannotCostNameTheField) {
    auto field_of = [](const std::string& config) {
        try {
            quantized_job(config);
        } catch (const InputError& e) {
            return e.field();
        }
        return std::string("no error");
    };
    EXPECT_EQ(field_of(R"({"quant_method": "gptq", "bits": 8, "group_size": 128})"), "model.quantization_config.bits");
    EXPECT_EQ(field_of(R"({"quant_method": "awq", "bits": 4, "group_size": -1})"),
              "model.quantization_config.group_size");
    EXPECT_EQ(field_of(R"({"quant_method": "awq", "version": "gemv"})"), "model.quantization_config.version");
    EXPECT_EQ(field_of(R"({"quant_method": "modelopt", "quant_algo": "FP8"})"), "model.quantization_config.quant_algo");
    EXPECT_EQ(field_of(R"({"quant_method": "hqq"})"), "model.quantization_config.quant_method");
    // DeepSeek-V3's block fp8 stays the unquantised model, as before.
    EXPECT_EQ(quantized_job(R"({"quant_method": "fp8", "weight_block_size": [128, 128]})").spec.train.method,
              Method::lora);
}

// The catalog's pre-quantised checkpoints (data/models/SOURCES.md) read as the format their sources state.
TEST(QuantizedCheckpoint, CatalogCheckpointsCarryTheirStatedFormat) {
    const ModelSpec gptq = Catalog::instance().model("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ", {"job.yaml", "model"});
    EXPECT_EQ(gptq.quantized.format, WeightFormat::gptq);
    EXPECT_EQ(gptq.quantized.bits, 4);
    EXPECT_EQ(gptq.quantized.group_size, 128);
    const ModelSpec nvfp4 = Catalog::instance().model("nvidia/Qwen3-30B-A3B-NVFP4", {"job.yaml", "model"});
    EXPECT_EQ(nvfp4.quantized.format, WeightFormat::nvfp4);
    EXPECT_EQ(nvfp4.quantized.group_size, 16);   // NVFP4's scale block: the reader's ModelOpt default
    // The unquantised base keeps bf16 weights.
    EXPECT_EQ(Catalog::instance().model("Qwen/Qwen3-30B-A3B", {"job.yaml", "model"}).quantized.format, WeightFormat::none);
}

}  // namespace
}  // namespace ftb
