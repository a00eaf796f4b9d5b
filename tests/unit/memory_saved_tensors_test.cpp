// The activation term of the memory walk against an exact count: validation/measured/saved-tensors/blocks.csv,
// written by tools/groundtruth/saved_tensors.py, which runs one Llama block (HuggingFace's eager path, peft's
// LoRA) under torch.autograd.graph.saved_tensors_hooks and sums every distinct storage kept for backward.
// Each row becomes a one-block inline Llama job (framework hf, eager attention, pure weights) and the walk's
// saved bytes of that block must match within 2%.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "memory/activations.hpp"
#include "memory/stage_activations.hpp"
#include "plan_test_util.hpp"

namespace ftb {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> read_blocks() {
    std::ifstream in(std::string(FTBOUND_SOURCE_DIR) + "/validation/measured/saved-tensors/blocks.csv");
    std::vector<Row> rows;
    std::string line;
    std::vector<std::string> header;
    auto split = [](const std::string& s) {
        std::vector<std::string> out;
        std::stringstream ss(s);
        std::string f;
        while (std::getline(ss, f, ',')) out.push_back(f);
        if (!s.empty() && s.back() == ',') out.emplace_back();
        return out;
    };
    if (std::getline(in, line)) header = split(line);
    while (std::getline(in, line)) {
        const auto fields = split(line);
        Row r;
        for (size_t i = 0; i < header.size() && i < fields.size(); ++i) r[header[i]] = fields[i];
        rows.push_back(r);
    }
    return rows;
}

Job job_for(const Row& r) {
    const std::string method = r.at("method") == "frozen" ? "full" : r.at("method");
    std::string targets;
    std::stringstream ts(r.at("lora_targets"));
    for (std::string t; ts >> t;) targets += (targets.empty() ? "\"" : ", \"") + t + "\"";
    const std::string lora = method == "lora" ? R"(, "lora": {"rank": )" + r.at("lora_rank") + R"(, "targets": [)" + targets + "]}" : "";
    const std::string precision = r.at("dtype") == "fp32" ? "fp32" : "bf16";
    Json doc = Json::parse(R"({
      "model": {"model_type": "llama", "hidden_size": )" + r.at("hidden") + R"(, "intermediate_size": )" + r.at("ffn") +
                           R"(, "num_hidden_layers": 1, "num_attention_heads": )" + r.at("heads") +
                           R"(, "num_key_value_heads": )" + r.at("kv_heads") + R"(, "vocab_size": 1000},
      "train": {"method": ")" + method + "\"" + lora + R"(, "precision": ")" + precision + R"(", "weights": "pure",
                "micro_batch": )" + r.at("micro_batch") + R"(, "seq_len": )" + r.at("seq_len") + R"(,
                "activation_checkpointing": ")" + r.at("recompute") + R"(", "attention": "eager", "framework": "hf"},
      "hardware": {"gpu": "h100-sxm", "gpus_per_node": 1}
    })");
    return job_from_document(doc, "saved-tensors " + r.at("id"));
}

// Saved bytes of the block as the walk counts them: the stage's first block for full and LoRA; a block whose
// weights are all frozen but whose input needs its gradient (below trainable layers) for "frozen".
double walk_saved_bytes(const Row& r) {
    const Job job = job_for(r);
    const TrainingSetup set = derive_setup(job);
    if (r.at("method") == "frozen") {
        const LayerActivation a = layer_activation(job.model.layers[0], job.model, job, set, false, true, job.spec.train.seq_len);
        return a.per_token.total() * double(set.tokens_per_micro_batch);
    }
    return stage_activations(job, set, stage_split(1, 1, 0), 0).per_block.at(0);
}

TEST(MemorySavedTensors, BlockActivationsMatchSavedTensorHooks) {
    const auto rows = read_blocks();
    ASSERT_GE(rows.size(), 10u) << "validation/measured/saved-tensors/blocks.csv";
    for (const Row& r : rows) {
        const double measured = std::stod(r.at("saved_bytes"));
        const double walk = walk_saved_bytes(r);
        EXPECT_NEAR(walk, measured, 0.02 * measured) << r.at("id") << ": walk " << walk << " vs hooks " << measured;
    }
}

}  // namespace
}  // namespace ftb
