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
#include "test_paths.hpp"

namespace ftb {
namespace {

using Row = std::map<std::string, std::string>;

// One CSV of validation/measured/saved-tensors/ as rows keyed by the header.
std::vector<Row> read_csv(const std::string& name) {
    std::ifstream in(std::string(ftb_test::source_dir()) + "/validation/measured/saved-tensors/" + name);
    std::vector<Row> rows;
    std::vector<std::string> header;
    auto split = [](const std::string& s) {
        std::vector<std::string> out;
        std::stringstream ss(s);
        for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
        if (!s.empty() && s.back() == ',') out.emplace_back();
        return out;
    };
    std::string line;
    auto chomp = [](std::string& l) { if (!l.empty() && l.back() == '\r') l.pop_back(); };   // Python's csv writes CRLF
    if (std::getline(in, line)) chomp(line), header = split(line);
    while (std::getline(in, line)) {
        chomp(line);
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
    const auto rows = read_csv("blocks.csv");
    ASSERT_GE(rows.size(), 10u) << "validation/measured/saved-tensors/blocks.csv";
    for (const Row& r : rows) {
        const double measured = std::stod(r.at("saved_bytes"));
        const double walk = walk_saved_bytes(r);
        EXPECT_NEAR(walk, measured, 0.02 * measured) << r.at("id") << ": walk " << walk << " vs hooks " << measured;
    }
}

// LitGPT's own LoRA block (lit_gpt/lora.py and model.py at 8641822, the commit of its resource tables) counted the
// same way by tools/groundtruth/litgpt_saved_tensors.py: validation/measured/saved-tensors/litgpt_blocks.csv.
// Each row becomes a one-block inline job of its model type under the litgpt profile (SDPA, pure bf16, LoRA
// dropout 0 as run there) and the walk's saved bytes of that block must match within 2%.
Job litgpt_job_for(const Row& r) {
    const std::string type = r.at("model_type");
    std::string model = R"("model_type": ")" + type + R"(", "hidden_size": )" + r.at("hidden") +
                        R"(, "intermediate_size": )" + r.at("ffn") + R"(, "num_hidden_layers": 1, "num_attention_heads": )" +
                        r.at("heads") + R"(, "vocab_size": 64)";
    if (type == "phi") model += R"(, "partial_rotary_factor": )" + r.at("rotary");
    if (type == "gpt_neox") model += R"(, "rotary_pct": )" + r.at("rotary");
    if (type == "llama") model += R"(, "num_key_value_heads": )" + r.at("heads");
    std::string targets;
    std::stringstream ts(r.at("lora_targets"));
    for (std::string t; ts >> t;) targets += (targets.empty() ? "\"" : ", \"") + t + "\"";
    Json doc = Json::parse(R"({
      "model": {)" + model + R"(},
      "train": {"method": "lora", "lora": {"rank": )" + r.at("lora_rank") + R"(, "dropout": 0, "targets": [)" + targets + R"(]},
                "precision": "bf16", "weights": "pure", "micro_batch": )" + r.at("micro_batch") + R"(, "seq_len": )" +
                           r.at("seq_len") + R"(, "activation_checkpointing": "none", "attention": "sdpa", "framework": "litgpt"},
      "hardware": {"gpu": "a100-sxm-40gb", "gpus_per_node": 1}
    })");
    return job_from_document(doc, "litgpt saved-tensors " + r.at("id"));
}

TEST(MemorySavedTensors, LitGptLoraBlockMatchesSavedTensorHooks) {
    const auto rows = read_csv("litgpt_blocks.csv");
    ASSERT_GE(rows.size(), 5u) << "validation/measured/saved-tensors/litgpt_blocks.csv";
    for (const Row& r : rows) {
        const Job job = litgpt_job_for(r);
        const TrainingSetup set = derive_setup(job);
        const double walk = stage_activations(job, set, stage_split(1, 1, 0), 0).per_block.at(0);
        const double measured = std::stod(r.at("saved_bytes"));
        EXPECT_NEAR(walk, measured, 0.02 * measured) << r.at("id") << ": walk " << walk << " vs hooks " << measured;
    }
}

// Hand-computed: a phi-like LitGPT block, hidden 256, FFN 1024, 8 heads, LoRA r8 on q and v, dropout 0,
// micro-batch 2 x 64 tokens, bf16. Per token: LayerNorm input 2*256 + fp32 mean/rstd 8; the adapters' shared
// input 2*256 and lora_A's output 2*8; zero_pad's index_copy source (q and v width) 2*512; attention: roped q
// and k 2*256 each, the whole qkv output behind the value view 2*768, the output 2*256, log-sum-exp 4*8; GELU
// input 2*1024. Sum 7224 B per token, 128 tokens: 924672 B (the hooks count 930312 B: lora_A's output is
// 2 x rank wide for q and v, and the int64 index of index_copy).
TEST(MemorySavedTensors, LitGptPhiBlockByHand) {
    const Row r = {{"id", "phi-hand"}, {"model_type", "phi"}, {"hidden", "256"}, {"heads", "8"}, {"ffn", "1024"},
                   {"rotary", "0.5"}, {"micro_batch", "2"}, {"seq_len", "64"}, {"lora_rank", "8"},
                   {"lora_targets", "q_proj v_proj"}};
    const Job job = litgpt_job_for(r);
    const TrainingSetup set = derive_setup(job);
    EXPECT_DOUBLE_EQ(stage_activations(job, set, stage_split(1, 1, 0), 0).per_block.at(0), 924672.0);
}

}  // namespace
}  // namespace ftb
