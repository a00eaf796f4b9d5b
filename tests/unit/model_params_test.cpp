// Exact parameter counts.
//  1. `ftbound model ID --json` for every catalog model against the table in data/models/SOURCES.md
//     (parsed here, so a new model without a published figure fails the test).
//  2. Tiny inline configs of every family, against counts worked out by hand from each family's
//     transformers module layout (modeling_<family>.py); the formula is in the comment beside each.
//  3. Configs whose counts or layer lists do not fit the machine: input errors, never a wrong number.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <algorithm>
#include <string>

#include "ftbound/error.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using spec_test::describe;
using spec_test::run_ftbound;

namespace {

struct SourceRow {
    std::string id, kind, published;
    int64_t total = 0;
};

int64_t digits_of(const std::string& s) {
    std::string d;
    for (char c : s)
        if (std::isdigit(static_cast<unsigned char>(c))) d += c;
    return std::stoll(d);
}

std::map<std::string, SourceRow> sources_table() {
    std::ifstream in(std::string(ftb_test::source_dir()) + "/data/models/SOURCES.md");
    std::map<std::string, SourceRow> rows;
    std::string line;
    // | id | exact total | kind | published figure and where |
    static const std::regex row(R"(^\|\s*([A-Za-z0-9._-]+/[A-Za-z0-9._-]+)\s*\|\s*([0-9,]+)\s*\|\s*([a-z()+-]+)\s*\|(.*)\|\s*$)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_match(line, m, row)) continue;
        rows[m[1]] = SourceRow{m[1], m[3], m[4], digits_of(m[2])};
    }
    return rows;
}

std::vector<std::string> catalog_model_ids() {
    std::vector<std::string> ids;
    const fs::path dir = fs::path(ftb_test::source_dir()) / "data" / "models";
    for (auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".json") {
            std::string rel = fs::relative(e.path(), dir).string();
            ids.push_back(rel.substr(0, rel.size() - 5));
        }
    std::sort(ids.begin(), ids.end());
    return ids;
}

nlohmann::json model_json(const std::string& id_or_path) {
    spec_test::CliResult r = run_ftbound({"model", id_or_path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << id_or_path << ": " << describe(r);
    if (r.exit_code != 0) return {};
    return nlohmann::json::parse(r.out);
}

// Published figures that are rounded (SOURCES.md kind "computed"): our exact count must round to them.
// Bounds: the figure +- half a unit of its last digit, widened to 1% where the publisher rounded twice
// (MPT-7B's card says 6.7B for 6,649,286,656, i.e. 6.65 -> 6.7).
const std::map<std::string, std::pair<double, double>> kRoundedBounds = {
    {"tiiuae/falcon-7b", {6.5e9, 7.5e9}},           // card: "7B parameters"
    {"mosaicml/mpt-7b", {6.7e9 * 0.99, 6.7e9 * 1.01}},  // card hyperparameter table: 6.7B
    {"bigscience/T0_3B", {2.5e9, 3.5e9}},           // card: "3 billion"
    {"bigscience/mt0-xxl", {12.5e9, 13.5e9}},       // card / mT5 paper: "13B"
    {"facebook/opt-1.3b", {1.25e9, 1.35e9}},        // OPT paper Table 1: 1.3B
    // The hub's bf16 pytorch_model.bin is 5.29 GB (tied head stored once): 2 bytes a parameter, 2.6425B-2.6475B.
    {"cerebras/btlm-3b-8k-base", {2.6425e9, 2.6475e9}},
    {"OpenMOSS-Team/MOSS-VL-Instruct-0708", {10.5e9, 11.5e9}},   // OpenMOSS/MOSS-VL README model table: 11B
    {"google-t5/t5-small", {55e6, 65e6}},           // T5 card: "60 million"
    {"deepseek-ai/DeepSeek-V2-Lite", {15.65e9, 15.75e9}},        // model card: 15.7B total
    {"openai/gpt-oss-120b", {116.825e9, 116.835e9}},             // gpt-oss model card: 116.83B total
    {"zai-org/GLM-4.5-Air", {106e9 * 0.99, 106e9 * 1.01}},       // GLM-4.5 README: 106B total (truncated: 1%)
    {"zai-org/GLM-4.7-Flash", {29.5e9, 30.5e9}},                 // "30B-A3B"
    {"MiniMaxAI/MiniMax-M2", {230e9 * 0.99, 230e9 * 1.01}},      // model card: 230B total (rounded twice: 1%)
    {"meta-llama/Llama-4-Maverick-17B-128E", {400e9 * 0.99, 400e9 * 1.01}},   // model card: 400B total
    {"arcee-ai/AFM-4.5B", {4.55e9, 4.65e9}},                     // hub listing: 4.6B params
    // Card: "7 billion parameters" = the blocks outside the tied 1,048,576,000-parameter embedding (6.98B).
    {"CohereForAI/c4ai-command-r7b-12-2024", {6.5e9 + 1048576000.0, 7.5e9 + 1048576000.0}},
    {"canopylabs/orpheus-3b-0.1-pretrained", {2.5e9, 3.5e9}},    // axolotl README: "a LLaMA 3.2 3b model"
    // "XiaomiMiMo/MiMo-7B-RL | 7.83B" total params read from the hub's safetensors metadata (with the MTP layer;
    // without it 7.62B, with two 8.04B).
    {"XiaomiMiMo/MiMo-7B-RL", {7.825e9, 7.835e9}},
    // "Nemotron-Mini-4B-Instruct-f16.gguf 7.8GB" (GiB): 4.19B at 2 bytes a parameter; 32 query heads would be 8.2.
    {"nvidia/Nemotron-Mini-4B-Instruct", {4.15e9, 4.25e9}},
    // llama-bench "3.61 B" for its GGUF conversions (the tied Llama 3.2 3B prints 3.21 B).
    {"deepcogito/cogito-v1-preview-llama-3B", {3.605e9, 3.615e9}},
    {"THUDM/GLM-4-32B-0414", {32.565e9, 32.575e9}},             // llama.cpp: model params = 32.57 B (GLM-Z1-32B-0414)
    {"tencent/Hunyuan-0.5B-Instruct", {0.535e9, 0.545e9}},       // survey table from its config.json / GGUF: 0.54B
    // Mistral: a 12B decoder (Mistral Nemo, exactly 12,247,782,400) + a 400M vision encoder.
    {"mistral-community/pixtral-12b", {12247782400.0 + 0.35e9, 12247782400.0 + 0.45e9}},
    // Model card: "~9.5 GB of GPU RAM in bf16" (2 bytes a parameter: about 4.7B, the untied count; a tied head would
    // be 4.27B, 8.5 GB); the 3B of its name is the Ministral-3B text model alone.
    {"mistralai/Voxtral-Mini-3B-2507", {4.6e9, 4.75e9}},
    // Meta's card: "88.8B". The same card's "10.6B" for the 11B is 0.66 % off that checkpoint's exact 10,670,220,835,
    // so the card's figures are held to 1 %.
    {"meta-llama/Llama-3.2-90B-Vision-Instruct", {88.8e9 * 0.99, 88.8e9 * 1.01}},
    {"ai21labs/Jamba-v0.1", {52e9 * 0.99, 52e9 * 1.01}},                     // model card: 52B total
    // "a 119.4-billion-parameter sparse Mixture-of-Experts model" (Mistral Small 4; its card: 119B total).
    {"axolotl-ai-co/Mistral-Small-4-119B-2603-BF16", {119.35e9, 119.45e9}},
    // "80B in total"; Qwen3-Coder-Next (the same shapes) publishes 79,674,391,296 exactly.
    {"Qwen/Qwen3-Next-80B-A3B-Instruct", {79674391296.0, 79674391297.0}},
    // The name's 122B; the text model alone is 122,111,526,912 in a public benchmark, the rest the vision tower.
    {"Qwen/Qwen3.5-122B-A10B", {122111526912.0 + 0.4e9, 122111526912.0 + 0.5e9}},
};

TEST(ModelParams, EveryCatalogModelMatchesSourcesTable) {
    const auto table = sources_table();
    const auto ids = catalog_model_ids();
    ASSERT_GE(ids.size(), 31u);
    for (const auto& id : ids) EXPECT_TRUE(table.count(id)) << id << " has no row in data/models/SOURCES.md";
    for (const auto& [id, row] : table) {
        SCOPED_TRACE(id);
        EXPECT_TRUE(std::find(ids.begin(), ids.end(), id) != ids.end()) << "SOURCES.md row without a config";
        nlohmann::json j = model_json(id);
        if (j.is_null()) continue;
        const int64_t total = j["params"]["total"].get<int64_t>();
        EXPECT_EQ(total, row.total) << "kind " << row.kind;
        // per_layer + embedding + head + the rest must add up; a negative part means a bug.
        int64_t layers_sum = 0;
        for (auto& p : j["params"]["per_layer"]) {
            EXPECT_GT(p.get<int64_t>(), 0);
            layers_sum += p.get<int64_t>();
        }
        EXPECT_EQ(j["params"]["per_layer"].size(), j["layers"].get<size_t>());
        const int64_t rest = total - layers_sum - j["params"]["embedding"].get<int64_t>() - j["params"]["lm_head"].get<int64_t>() -
                             j["params"]["vision"].get<int64_t>() - j["params"]["idle"].get<int64_t>();
        EXPECT_GE(rest, 0);
        // mllama also holds 8 embedding rows beyond vocab_size (MllamaTextModel: vocab_size + 8) and two scalar
        // gates per cross-attention block (8 blocks in the catalog's Llama 3.2 11B Vision).
        const int64_t mllama_extra = j["architecture"] == "mllama" ? 8 * j["hidden_size"].get<int64_t>() + 16 : 0;
        EXPECT_LT(rest, 4 * j["hidden_size"].get<int64_t>() + 1 + mllama_extra) << "final norms (+ OPT projections) only";
        if (row.kind == "exact-pub(+buf)") {
            // The HF API total counts rotary_emb.inv_freq (head_dim/2 = 64 fp32 values per layer) as well.
            std::smatch m;
            ASSERT_TRUE(std::regex_search(row.published, m, std::regex(R"(safetensors\.total ([0-9,]+))"))) << row.published;
            const int64_t hf_api = digits_of(m[1]);
            EXPECT_EQ(hf_api - 64 * j["layers"].get<int64_t>(), total) << "HF API " << hf_api;
        } else if (row.kind == "computed") {
            ASSERT_TRUE(kRoundedBounds.count(id)) << "computed row without a rounded published figure in this test";
            const auto [lo, hi] = kRoundedBounds.at(id);
            EXPECT_GE(double(total), lo);
            EXPECT_LT(double(total), hi);
        } else {
            EXPECT_EQ(row.kind, "exact-pub");
        }
    }
}

// Counts worked out by hand for three computed rows (so they are not only "our own count"):
//  falcon-7b: per layer qkv 4544*(4544+2*64) + dense 4544^2 + mlp 2*4544*18176 + ln 2*4544 = 207,070,080;
//             x32 + embedding 65024*4544 (tied) + ln_f 9088 = 6,921,720,704.
//  opt-1.3b:  per layer 4*(2048^2+2048) + (2048*8192+8192) + (8192*2048+2048) + 2*2*2048 = 50,358,272;
//             x24 + 50272*2048 + (2048+2)*2048 + 2*2048 = 1,315,758,080.
//  t5-small:  32128*512 + 6*(4*512^2 + 2*512*2048 + 2*512) + 6*(8*512^2 + 2*512*2048 + 3*512) + 2*32*8 + 2*512
//             = 60,506,624.
TEST(ModelParams, HandCountsOfComputedRows) {
    EXPECT_EQ(model_json("tiiuae/falcon-7b")["params"]["total"], 6921720704LL);
    EXPECT_EQ(model_json("facebook/opt-1.3b")["params"]["total"], 1315758080LL);
    EXPECT_EQ(model_json("google-t5/t5-small")["params"]["total"], 60506624LL);
}

// ---- tiny inline configs -------------------------------------------------------------------------

ftb::ModelSpec read(const std::string& yaml) {
    ftb::Json doc = ftb::parse_yaml_text(yaml, "inline");
    return ftb::model_from_hf_config(ftb::Fields(doc, "inline", "model"), "tiny");
}

std::vector<int64_t> per_layer(const ftb::ModelSpec& m) {
    std::vector<int64_t> v;
    for (auto& l : m.layers) v.push_back(l.params());
    return v;
}

struct Tiny {
    const char* name;
    std::string config;
    int64_t total;
    std::vector<int64_t> layers;   // per block
};

// Shared shape unless a case says otherwise: hidden h=64, vocab V=1000, 2 blocks, 4 heads.
std::vector<Tiny> tiny_models() {
    return {
        // llama, GQA (kv 2) and head_dim 32 != 64/4: q 64*128, k 64*64, v 64*64, o 128*64 = 24,576;
        // gate/up/down 3*64*160 = 30,720; 2 RMSNorm 128 -> 55,424 per block.
        // total 2*55,424 + embed 64,000 + lm_head 64,000 + final norm 64 = 238,912.
        {"llama_gqa_head_dim",
         "{model_type: llama, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000, tie_word_embeddings: false}",
         238912, {55424, 55424}},
        // llama with attention_bias and mlp_bias: + q/k/v bias 128+64+64 + o bias 64 + gate/up 2*160 + down 64 = +704.
        {"llama_biases",
         "{model_type: llama, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000, tie_word_embeddings: false, attention_bias: true,"
         " mlp_bias: true}",
         238912 + 2 * 704, {55424 + 704, 55424 + 704}},
        // mistral: head_dim 16, kv 2: q 4,096 + k 2,048 + v 2,048 + o 4,096 = 12,288 (no biases); mlp 3*64*128 = 24,576;
        // norms 128 -> 36,992. Untied: 2*36,992 + 64,000 + 64,000 + 64 = 202,048. (sliding_window changes no count.)
        {"mistral_sliding_window",
         "{model_type: mistral, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, sliding_window: 16, tie_word_embeddings: false}",
         202048, {36992, 36992}},
        // qwen2: head_dim 16, kv 2: q 4096 + k 2048 + v 2048 + o 4096 = 12,288, q/k/v biases 64+32+32 = 128
        // (o_proj has none); mlp 3*64*128 = 24,576; norms 128 -> 37,120. Tied: 2*37,120 + 64,000 + 64 = 138,304.
        {"qwen2_biases_tied",
         "{model_type: qwen2, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, tie_word_embeddings: true}",
         138304, {37120, 37120}},
        // mimo: the qwen2 blocks above, untied: 2*37,120 + 64,000 + 64,000 + 64 = 202,304, plus one MTP layer that
        // MiMoModel holds and its forward never runs (not among the blocks): a qwen2 block 37,120 + input_proj
        // 2*64*64 = 8,192 + token/hidden/final RMSNorms 3*64 = 192 -> 45,504. Total 247,808.
        {"mimo_mtp_layer",
         "{model_type: mimo, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, tie_word_embeddings: false, num_nextn_predict_layers: 1}",
         247808, {37120, 37120}},
        // qwen3: head_dim 32: attention 24,576 + q_norm/k_norm 2*32 = 24,640; mlp 24,576; norms 128 -> 49,344.
        // 2*49,344 + 64,000 + 64,000 + 64 = 226,752.
        {"qwen3_qk_norm",
         "{model_type: qwen3, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000, tie_word_embeddings: false}",
         226752, {49344, 49344}},
        // gemma2: head_dim 32; attention 24,576, mlp 24,576, 4 RMSNorms 256 -> 49,408; tied by default:
        // 2*49,408 + 64,000 + 64 = 162,880.
        {"gemma2_four_norms_tied",
         "{model_type: gemma2, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000}",
         162880, {49408, 49408}},
        // gemma: as gemma2 with 2 norms: 49,408 - 128 = 49,280; 2*49,280 + 64,000 + 64 = 162,624.
        {"gemma_tied",
         "{model_type: gemma, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000}",
         162624, {49280, 49280}},
        // mixtral: attention 12,288 (head_dim 16, kv 2); 4 experts * 3*64*96 = 73,728 + router 64*4 = 256;
        // norms 128 -> 86,400. 2*86,400 + 64,000 + 64,000 + 64 = 300,864.
        {"mixtral_experts_router",
         "{model_type: mixtral, hidden_size: 64, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, num_local_experts: 4, num_experts_per_tok: 2, vocab_size: 1000,"
         " tie_word_embeddings: false}",
         300864, {86400, 86400}},
        // qwen2_moe, 3 blocks, block 1 dense (mlp_only_layers). Attention: 4*64*64 + q/k/v bias 192 = 16,576.
        // Sparse block: 4 experts * 3*64*32 = 24,576 + router 256 + shared expert 3*64*96 = 18,432 + shared gate 64
        // + norms 128 -> 16,576 + 43,328 + 128 = 60,032. Dense block: 3*64*128 = 24,576 -> 41,280.
        // 2*60,032 + 41,280 + 64,000 + 64,000 + 64 = 289,408.
        {"qwen2_moe_shared_expert",
         "{model_type: qwen2_moe, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 32,"
         " shared_expert_intermediate_size: 96, num_experts: 4, num_experts_per_tok: 2, decoder_sparse_step: 1,"
         " mlp_only_layers: [1], num_hidden_layers: 3, num_attention_heads: 4, vocab_size: 1000,"
         " tie_word_embeddings: false}",
         289408, {60032, 41280, 60032}},
        // phi3: attention 4*64*64 = 16,384 (fused qkv_proj, same count); gate_up + down 3*64*128 = 24,576; norms 128.
        // 2*41,088 + 64,000 + 64,000 + 64 = 210,240.
        {"phi3",
         "{model_type: phi3, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, tie_word_embeddings: false}",
         210240, {41088, 41088}},
        // phi: q/k/v/dense with bias 4*(64*64+64) = 16,640; fc1 64*256+256 + fc2 256*64+64 = 33,088;
        // one input_layernorm with bias 128 -> 49,856. final_layernorm 128, lm_head 64*1000 + bias 1000.
        // 2*49,856 + 64,000 + 128 + 65,000 = 228,840.
        {"phi",
         "{model_type: phi, hidden_size: 64, intermediate_size: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000}",
         228840, {49856, 49856}},
        // phi with qk_layernorm: + q_layernorm and k_layernorm, LayerNorm(head_dim 16) with bias = 4*16 = 64 per block.
        {"phi_qk_layernorm",
         "{model_type: phi, hidden_size: 64, intermediate_size: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, qk_layernorm: true}",
         228840 + 2 * 64, {49856 + 64, 49856 + 64}},
        // gpt2: c_attn 64*192+192 + c_proj 64*64+64 + c_fc 64*256+256 + c_proj 256*64+64 + ln_1/ln_2 2*128 = 49,984;
        // wte 64,000 + wpe 128*64 = 8,192 + ln_f 128; tied head. 2*49,984 + 72,320 = 172,288.
        {"gpt2",
         "{model_type: gpt2, n_embd: 64, n_layer: 2, n_head: 4, n_positions: 128, vocab_size: 1000}", 172288,
         {49984, 49984}},
        // btlm (cerebras modeling_btlm.py), ALiBi + SwiGLU: no wpe; c_attn 12,480 + c_proj 4,160 + c_fc and c_fc2
        // 2*(64*96+96) = 12,480 + c_proj 96*64+64 = 6,208 + ln_1/ln_2 256 = 35,584; wte 64,000 (tied) + ln_f 128:
        // 2*35,584 + 64,128 = 135,296.
        {"btlm_alibi_swiglu",
         "{model_type: btlm, n_embd: 64, n_layer: 2, n_head: 4, n_inner: 96, n_positions: 128, vocab_size: 1000,"
         " position_embedding_type: alibi, activation_function: swiglu}",
         135296, {35584, 35584}},
        // btlm with learned positions and a plain GELU MLP (the Cerebras-GPT muP checkpoints): GPT-2's count.
        {"btlm_learned_gelu",
         "{model_type: btlm, n_embd: 64, n_layer: 2, n_head: 4, n_positions: 128, vocab_size: 1000,"
         " position_embedding_type: learned, activation_function: gelu}",
         172288, {49984, 49984}},
        // gpt_neox: query_key_value 12,480 + dense 4,160 + h_to_4h 16,640 + 4h_to_h 16,448 + 2 LN 256 = 49,984;
        // rotary (no table), untied embed_out: 2*49,984 + 64,000 + 64,000 + 128 = 228,096.
        {"gpt_neox",
         "{model_type: gpt_neox, hidden_size: 64, intermediate_size: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, max_position_embeddings: 128}",
         228096, {49984, 49984}},
        // mpt, no_bias, learned positions (alibi off): Wqkv 64*192 + out_proj 4,096 + up/down 2*64*256 +
        // norm_1/norm_2 weight-only 128 = 49,280; wte 64,000 + wpe 128*64 + norm_f 64 (tied head):
        // 2*49,280 + 64,000 + 8,192 + 64 = 170,816.
        {"mpt_learned_positions_no_bias",
         "{model_type: mpt, d_model: 64, n_layers: 2, n_heads: 4, expansion_ratio: 4, max_seq_len: 128,"
         " vocab_size: 1000, no_bias: true, learned_pos_emb: true, attn_config: {alibi: false}}",
         170816, {49280, 49280}},
        // mpt with biases and ALiBi (no position table): + Wqkv bias 192 + out 64 + up 256 + down 64 + norm biases 128
        // = 49,984 per block; 2*49,984 + 64,000 + norm_f 128 = 164,096 (learned_pos_emb defaults to true, but
        // ALiBi replaces the table: SOURCES.md, mpt-7b).
        {"mpt_alibi_biases",
         "{model_type: mpt, d_model: 64, n_layers: 2, n_heads: 4, expansion_ratio: 4, max_seq_len: 128,"
         " vocab_size: 1000, no_bias: false, attn_config: {alibi: true}}",
         164096, {49984, 49984}},
        // falcon, old architecture, multi-query: query_key_value 64*(64+2*16) = 6,144, dense 4,096, mlp 2*64*256,
        // one input_layernorm 128 -> 43,136; tied: 2*43,136 + 64,000 + ln_f 128 = 150,400.
        {"falcon_multi_query",
         "{model_type: falcon, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 1000,"
         " multi_query: true, parallel_attn: true, bias: false, new_decoder_architecture: false}",
         150400, {43136, 43136}},
        // falcon, new architecture, 2 KV heads: query_key_value 64*(64+2*32) = 8,192, dense 4,096, mlp 32,768,
        // ln_attn + ln_mlp 256 -> 45,312; 2*45,312 + 64,000 + 128 = 154,752.
        {"falcon_new_architecture",
         "{model_type: falcon, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_kv_heads: 2,"
         " vocab_size: 1000, new_decoder_architecture: true, bias: false}",
         154752, {45312, 45312}},
        // bloom: qkv 12,480 + dense 4,160 + mlp 16,640 + 16,448 + 2 LN 256 = 49,984; word_embeddings 64,000,
        // word_embeddings_layernorm 128, ln_f 128, tied: 2*49,984 + 64,256 = 164,224.
        {"bloom", "{model_type: bloom, hidden_size: 64, n_layer: 2, n_head: 4, vocab_size: 1000}", 164224, {49984, 49984}},
        // stablelm, qkv bias + per-head qk LayerNorm (weight only): q 4,096+64, k 2,048+32, v 2,048+32, o 4,096,
        // q_layernorm 4*16 + k_layernorm 2*16 = 96; mlp 3*64*160 = 30,720; 2 LN with bias 256 -> 43,488;
        // 2*43,488 + 64,000 + 64,000 + 128 = 215,104.
        {"stablelm_qkv_bias_qk_norm",
         "{model_type: stablelm, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, use_qkv_bias: true, qk_layernorm: true,"
         " use_parallel_residual: false, tie_word_embeddings: false}",
         215104, {43488, 43488}},
        // opt with word_embed_proj_dim 32: blocks 4*(64*64+64) + (64*256+256) + (256*64+64) + 2 LN 256 = 49,984;
        // embed_tokens 1000*32, embed_positions (128+2)*64 = 8,320, project_in 32*64 + project_out 64*32,
        // final_layer_norm 128, head tied to embed_tokens: 2*49,984 + 32,000 + 8,320 + 4,096 + 128 = 144,512.
        {"opt_word_embed_proj_dim",
         "{model_type: opt, hidden_size: 64, ffn_dim: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, max_position_embeddings: 128, word_embed_proj_dim: 32}",
         144512, {49984, 49984}},
        // opt-350m style: post-LN (do_layer_norm_before false) has no final_layer_norm: 144,512 - 128 = 144,384.
        {"opt_post_layer_norm",
         "{model_type: opt, hidden_size: 64, ffn_dim: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, max_position_embeddings: 128, word_embed_proj_dim: 32, do_layer_norm_before: false}",
         144384, {49984, 49984}},
        // opt with an untied head: lm_head = Linear(word_embed_proj_dim, vocab) (OPTForCausalLM), 32*1000 = 32,000:
        // 144,512 + 32,000 = 176,512.
        {"opt_untied_projected_head",
         "{model_type: opt, hidden_size: 64, ffn_dim: 256, num_hidden_layers: 2, num_attention_heads: 4,"
         " vocab_size: 1000, max_position_embeddings: 128, word_embed_proj_dim: 32, tie_word_embeddings: false}",
         176512, {49984, 49984}},
        // t5 gated-gelu, d_model 32, d_kv 16 (inner 64 != d_model), d_ff 64, 2 encoder + 3 decoder blocks, untied.
        // attention q/k/v/o 4*32*64 = 8,192; wi_0/wi_1/wo 3*32*64 = 6,144; relative bias 32 buckets * 4 heads = 128
        // in the first block of each stack. Encoder block 8,192 + 6,144 + 2*32 = 14,400 (first +128);
        // decoder block 2*8,192 + 6,144 + 3*32 = 22,624 (first +128).
        // total 2*14,400 + 3*22,624 + 2*128 + shared 100*32 + 2 final norms 64 + lm_head 3,200 = 103,392.
        {"t5_gated_untied", spec_test::slurp(spec_test::data_path("configs/tiny_t5.json")), 103392,
         {14528, 14400, 22752, 22624, 22624}},
        // t5 v1.0 style: relu, d_kv 8 (inner 32), tied, decoder depth = encoder depth.
        // attention 4*32*32 = 4,096; wi/wo 2*32*64 = 4,096. Encoder block 4,096 + 4,096 + 64 = 8,256;
        // decoder block 2*4,096 + 4,096 + 96 = 12,384. 2*8,256 + 2*12,384 + 2*128 + 3,200 + 64 = 44,800.
        {"t5_plain_tied",
         "{model_type: t5, d_model: 32, d_kv: 8, d_ff: 64, num_layers: 2, num_heads: 4, vocab_size: 100,"
         " feed_forward_proj: relu}",
         44800, {8384, 8256, 12512, 12384}},
        // qwen3_moe (Qwen3MoeDecoderLayer): attention q 64*64 + k 64*32 + v 64*32 + o 64*64 = 12,288, q_norm + k_norm
        // 2*16 = 32, 2 norms 128. Layer 0 sparse: 4 experts * 3*64*32 = 24,576 + router 64*4 = 256 -> 37,280;
        // layer 1 in mlp_only_layers: dense 3*64*128 = 24,576 -> 37,024. + embed 64,000 + lm_head 64,000 + norm 64.
        {"qwen3_moe",
         "{model_type: qwen3_moe, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 32, num_experts: 4,"
         " num_experts_per_tok: 2, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " vocab_size: 1000, mlp_only_layers: [1], tie_word_embeddings: false}",
         202368, {37280, 37024}},
        // gemma3_text (Gemma3DecoderLayer): attention 12,288 as above + q_norm/k_norm 32, mlp 3*64*128 = 24,576,
        // 4 norms 256 -> 37,152; tied: 2*37,152 + 64,000 + 64 = 138,368.
        {"gemma3_text",
         "{model_type: gemma3_text, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, vocab_size: 1000, sliding_window: 8}",
         138368, {37152, 37152}},
        // gemma3_text with the Gemma3TextConfig defaults the published files rely on (8 heads, 4 kv heads, head_dim
        // 256, vocab 262,208): q 64*2048 + k,v 2*64*1024 + o 2048*64 = 393,216, norms q/k 512, mlp 24,576, 4 norms
        // 256 -> 418,560; + 262,208*64 = 16,781,312 + 64 = 17,199,936.
        {"gemma3_text_defaults", "{model_type: gemma3_text, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 1}",
         17199936, {418560}},
        // gemma3 (Gemma3ForConditionalGeneration): the gemma3_text above + SigLIP: patch Conv2d 3*14*14*32 + 32 =
        // 18,848, positions (28/14)^2*32 = 128, one block 4*(32*32+32) + (32*64+64) + (64*32+32) + 2 LayerNorms 128 =
        // 8,544, post_layernorm 64 -> 27,584; projector 32*64 + RMSNorm 32 = 2,080: 138,368 + 29,664 = 168,032.
        {"gemma3",
         "{model_type: gemma3, text_config: {model_type: gemma3_text, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000},"
         " vision_config: {model_type: siglip_vision_model, hidden_size: 32, intermediate_size: 64,"
         " num_hidden_layers: 1, num_attention_heads: 2, image_size: 28, patch_size: 14, vision_use_head: false}}",
         168032, {37152, 37152}},
        // deepseek_v3 (DeepseekV3Attention, MLA): q_a 64*32 + q_a_layernorm 32 + q_b 32*(4*12) = 3,616; kv_a 64*(16+4)
        // + kv_a_layernorm 16 = 1,296; kv_b 16*4*(8+8) = 1,024; o 4*8*64 = 2,048 -> 7,984; 2 norms 128.
        // Layer 0 dense 3*64*128 = 24,576 -> 32,688. Layer 1 MoE: 4 experts 4*3*64*16 = 12,288, router 64*4 + correction
        // bias 4 = 260, one shared expert 3*64*16 = 3,072 -> 23,732. + 64,000 + 64,000 + 64 = 184,484.
        {"deepseek_v3",
         "{model_type: deepseek_v3, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
         " n_routed_experts: 4, num_experts_per_tok: 2, n_shared_experts: 1, first_k_dense_replace: 1,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 4, kv_lora_rank: 16, q_lora_rank: 32,"
         " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, vocab_size: 1000, tie_word_embeddings: false}",
         184484, {32688, 23732}},
        // deepseek_v3 without a q latent (q_lora_rank null, DeepSeek-V2-Lite style): q_proj 64*48 = 3,072 replaces
        // 3,616: both layers 544 smaller -> 183,396.
        {"deepseek_v3_direct_q",
         "{model_type: deepseek_v3, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
         " n_routed_experts: 4, num_experts_per_tok: 2, n_shared_experts: 1, first_k_dense_replace: 1,"
         " num_hidden_layers: 2, num_attention_heads: 4, kv_lora_rank: 16, q_lora_rank: null,"
         " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, vocab_size: 1000, tie_word_embeddings: false}",
         183396, {32144, 23188}},
        // deepseek_v2 (DeepseekV2Moe): the direct-q layout above, but the router is nn.Linear(64, 4, bias=False) with no
        // correction bias: the MoE layer is 4 smaller -> 183,392.
        {"deepseek_v2",
         "{model_type: deepseek_v2, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
         " n_routed_experts: 4, num_experts_per_tok: 2, n_shared_experts: 1, first_k_dense_replace: 1,"
         " num_hidden_layers: 2, num_attention_heads: 4, kv_lora_rank: 16, q_lora_rank: null,"
         " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, vocab_size: 1000, tie_word_embeddings: false}",
         183392, {32144, 23184}},
        // glm4_moe_lite (GLM-4.7-Flash): DeepSeek-V3's layout, so the deepseek_v3 counts above: 184,484.
        {"glm4_moe_lite",
         "{model_type: glm4_moe_lite, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
         " n_routed_experts: 4, num_experts_per_tok: 2, n_shared_experts: 1, first_k_dense_replace: 1,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 4, kv_lora_rank: 16, q_lora_rank: 32,"
         " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, vocab_size: 1000, tie_word_embeddings: false}",
         184484, {32688, 23732}},
        // glm4_moe (Glm4MoeAttention): q 64*64 + k, v 2*64*32 + o 64*64 = 12,288, q/k/v biases 64+32+32 = 128 (o_proj
        // has none), q_norm/k_norm RMSNorm(16) 32 -> 12,448; norms 128. Layer 0 dense 3*64*128 = 24,576 -> 37,152.
        // Layer 1: 4 experts 4*3*64*16 = 12,288, router 64*4 + e_score_correction_bias 4 = 260, one shared expert
        // 3*64*16 = 3,072 -> 28,196. + 64,000 + 64,000 + 64 = 193,412.
        {"glm4_moe",
         "{model_type: glm4_moe, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
         " n_routed_experts: 4, num_experts_per_tok: 2, n_shared_experts: 1, first_k_dense_replace: 1,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, attention_bias: true,"
         " use_qk_norm: true, vocab_size: 1000, tie_word_embeddings: false}",
         193412, {37152, 28196}},
        // minimax_m2 (MiniMaxM2Attention): q/k/v/o 12,288 without biases, q_norm RMSNorm(4*16) 64 + k_norm RMSNorm(2*16)
        // 32 -> 12,384; 4 experts 4*3*64*16 = 12,288 + router 256 + e_score_correction_bias 4 = 12,548; norms 128 ->
        // 25,060 per block. 2*25,060 + 128,064 = 178,184.
        {"minimax_m2",
         "{model_type: minimax_m2, hidden_size: 64, intermediate_size: 16, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, num_local_experts: 4, num_experts_per_tok: 2, vocab_size: 1000}",
         178184, {25060, 25060}},
        // gpt_oss (GptOssAttention, GptOssExperts): q/k/v/o 12,288 + biases 64+32+32+64 = 192 + sinks 4 -> 12,484;
        // 4 experts of gate_up 64*32 + bias 32 and down 16*64 + bias 64: 4*(3,072 + 96) = 12,672, router 64*4 + bias 4
        // = 260 -> 12,932; norms 128 -> 25,544 per block. 2*25,544 + 128,064 = 179,152.
        {"gpt_oss",
         "{model_type: gpt_oss, hidden_size: 64, intermediate_size: 16, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, num_local_experts: 4, num_experts_per_tok: 2, vocab_size: 1000,"
         " sliding_window: 8}",
         179152, {25544, 25544}},
        // llama4_text (Llama4TextDecoderLayer), interleave_moe_layer_step 2: attention 12,288, norms 128. Layer 0 dense
        // (intermediate_size_mlp 128) 3*64*128 = 24,576 -> 36,992. Layer 1: 4 experts 4*3*64*16 = 12,288 + router 256 +
        // shared expert 3*64*16 = 3,072 -> 28,032. + 128,064 = 193,088.
        {"llama4_text",
         "{model_type: llama4_text, hidden_size: 64, intermediate_size: 16, intermediate_size_mlp: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, num_local_experts: 4,"
         " num_experts_per_tok: 1, interleave_moe_layer_step: 2, vocab_size: 1000, attention_chunk_size: 8}",
         193088, {36992, 28032}},
        // afmoe (AfmoeAttention, AfmoeMoE): q/k/v/o 12,288 + gate_proj 64*64 = 4,096 + q_norm/k_norm 32 -> 16,416;
        // four RMSNorms 256. Layer 0 dense 3*64*128 = 24,576 -> 41,248. Layer 1: 4 experts 12,288, router 256 +
        // expert_bias 4, one shared expert 3,072 -> 15,620 -> 32,292. + 128,064 = 201,604.
        {"afmoe",
         "{model_type: afmoe, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16, num_experts: 4,"
         " num_experts_per_tok: 2, num_shared_experts: 1, num_dense_layers: 1, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000, sliding_window: 8}",
         201604, {41248, 32292}},
        // llama4 (Llama4ForConditionalGeneration): the llama4_text above + Llama4VisionModel: patch linear 3*14*14*32 =
        // 18,816, class_embedding 32, positions (2*2+1)*32 = 160, layernorm_pre/post 128, one layer 4*(32*32+32) +
        // (32*64+64) + (64*32+32) + 2 LayerNorms 128 = 8,544, vision_adapter fc1 64*16 + fc2 16*16 = 1,280; projector
        // 16*64 = 1,024 -> 29,984. 193,088 + 29,984 = 223,072.
        {"llama4",
         "{model_type: llama4, text_config: {model_type: llama4_text, hidden_size: 64, intermediate_size: 16,"
         " intermediate_size_mlp: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,"
         " head_dim: 16, num_local_experts: 4, num_experts_per_tok: 1, interleave_moe_layer_step: 2,"
         " vocab_size: 1000}, vision_config: {hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1,"
         " num_attention_heads: 2, image_size: 28, patch_size: 14, projector_input_dim: 16, projector_output_dim: 16,"
         " vision_output_dim: 16}}",
         223072, {36992, 28032}},
        // Vision-language checkpoints (hf_config_vlm.cpp). The text models below are the tiny llama (36,992 per block:
        // attention 4,096 + 2*2,048 + 4,096, MLP 3*64*128, 2 RMSNorms), qwen2 (+ q/k/v biases 128 = 37,120) and qwen3
        // (+ q_norm/k_norm 32 = 37,024) blocks; embedding 1000*64, untied head 1000*64, final norm 64.
        // qwen2_vl, text fields at the top level as Qwen2-VL first published them: 2*37,120 + 128,064 = 202,304.
        // Tower: Conv3d 3*2*2*2*16 = 384 (no bias); one block: qkv + proj 4*16*16 + 64, fc1/fc2 2*16*32 + 32 + 16,
        // 2 LayerNorms 64 -> 2,224; merger: ln_q 32, [64 -> 64] + bias 4,160, [64 -> 64] + bias 4,160 -> 8,352.
        {"qwen2_vl",
         "{model_type: qwen2_vl, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, tie_word_embeddings: false, vision_config: {depth: 1,"
         " embed_dim: 16, mlp_ratio: 2, num_heads: 2, in_chans: 3, hidden_size: 64, patch_size: 2,"
         " spatial_merge_size: 2, temporal_patch_size: 2}}",
         213264, {37120, 37120}},
        // qwen2_5_vl: the same text (in text_config); block with RMSNorms 32 and a gated MLP with biases 3*16*24 +
        // 2*24 + 16 = 1,216 -> 2,336; merger ln_q RMSNorm 16 + 8,320; 384 + 2,336 + 8,336 = 11,056.
        {"qwen2_5_vl",
         "{model_type: qwen2_5_vl, tie_word_embeddings: false, text_config: {model_type: qwen2_5_vl_text,"
         " hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000}, vision_config: {depth: 1, hidden_size: 16,"
         " intermediate_size: 24, num_heads: 2, out_hidden_size: 64, patch_size: 2, spatial_merge_size: 2,"
         " temporal_patch_size: 2, in_channels: 3}}",
         213360, {37120, 37120}},
        // qwen3_vl, tied (top level): 2*37,024 + 64,000 + 64 = 138,112. Tower: Conv3d with bias 384 + 16, positions
        // 4*16, block 2,224, merger (LayerNorm 32) 8,352, one deepstack merger (LayerNorm over 64: 128) 8,448 -> 19,488.
        {"qwen3_vl",
         "{model_type: qwen3_vl, tie_word_embeddings: true, text_config: {model_type: qwen3_vl_text, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " vocab_size: 1000}, vision_config: {depth: 1, hidden_size: 16, intermediate_size: 32, num_heads: 2,"
         " out_hidden_size: 64, patch_size: 2, spatial_merge_size: 2, temporal_patch_size: 2, in_channels: 3,"
         " num_position_embeddings: 4, deepstack_visual_indexes: [0]}}",
         157600, {37024, 37024}},
        // qwen3_vl_moe: blocks of attention 12,320, 4 experts 4*3*64*16 = 12,288 + router 256, norms 128 = 24,992;
        // untied: 49,984 + 128,064 = 178,048; the qwen3_vl tower above 19,488.
        {"qwen3_vl_moe",
         "{model_type: qwen3_vl_moe, tie_word_embeddings: false, text_config: {model_type: qwen3_vl_moe_text,"
         " hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16, num_experts: 4, num_experts_per_tok: 2,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000},"
         " vision_config: {depth: 1, hidden_size: 16, intermediate_size: 32, num_heads: 2, out_hidden_size: 64,"
         " patch_size: 2, spatial_merge_size: 2, temporal_patch_size: 2, in_channels: 3, num_position_embeddings: 4,"
         " deepstack_visual_indexes: [0]}}",
         197536, {24992, 24992}},
        // llava: the tiny llama 202,048; CLIP tower: class 16, patch 3*2*2*16 = 192, positions (2*2 + 1)*16 = 80,
        // pre_layrnorm 32, block 2,224, post_layernorm 32 -> 2,576; projector [16 -> 64] + 64, [64 -> 64] + 64 = 5,248.
        {"llava",
         "{model_type: llava, tie_word_embeddings: false, vision_feature_layer: -2, text_config: {model_type: llama,"
         " hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000}, vision_config: {model_type: clip_vision_model, hidden_size: 16,"
         " intermediate_size: 32, num_hidden_layers: 1, num_attention_heads: 2, image_size: 4, patch_size: 2}}",
         209872, {36992, 36992}},
        // mistral3: the same text as mistral; Pixtral tower: patch_conv 3*2*2*16 = 192, ln_pre 16, block 4*16*16 +
        // 3*16*32 + 2 RMSNorms 32 = 2,592 -> 2,800; projector: norm 16, merging [16*4 -> 16] 1,024, linear_1 [16 -> 64]
        // 1,024, linear_2 [64 -> 64] 4,096, no biases (multimodal_projector_bias false) -> 6,160.
        {"mistral3",
         "{model_type: mistral3, text_config: {model_type: mistral, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000},"
         " vision_config: {model_type: pixtral, hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, patch_size: 2, image_size: 8}}",
         211008, {36992, 36992}},
        // mistral3 around a ministral3 text model (Mistral's modules, modular_ministral3.py) with Ministral3Config's
        // head_dim 128 where none is given (MistralConfig would take 64/4 = 16): q 64*512, k/v 64*256, o 512*64 =
        // 98,304, MLP 24,576, norms 128 -> 123,008 a block; tied: 2*123,008 + 64,000 + 64; the tower and projector
        // above 8,960.
        {"mistral3_ministral3",
         "{model_type: mistral3, text_config: {model_type: ministral3, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 1000,"
         " tie_word_embeddings: true}, vision_config: {model_type: pixtral, hidden_size: 16, intermediate_size: 32,"
         " num_hidden_layers: 1, num_attention_heads: 2, patch_size: 2, image_size: 8}}",
         319040, {123008, 123008}},
        // mistral4 (MLA + MoE, modular_mistral4.py): attention q_a 64*32 + q_a_layernorm 32 + q_b 32*4*16 = 4,128,
        // kv_a 64*(16+8) + kv_a_layernorm 16 = 1,552, kv_b 16*4*(8+16) = 1,536, o 4*16*64 = 4,096 -> 11,312.
        // Block 0 (first_k_dense_replace 1): gated MLP 3*64*128 = 24,576 + norms 128 -> 36,016. Block 1: 4 gated
        // experts 4*3*64*16 = 12,288, router 4*64 = 256 (no correction bias), shared 3*64*16 = 3,072 -> 15,616 +
        // 11,312 + 128 = 27,056. Untied: 63,072 + 128,064 = 191,136.
        {"mistral4_mla_moe",
         "{model_type: mistral4, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 4, q_lora_rank: 32, kv_lora_rank: 16, qk_rope_head_dim: 8,"
         " qk_nope_head_dim: 8, v_head_dim: 16, moe_intermediate_size: 16, n_routed_experts: 4,"
         " n_shared_experts: 1, num_experts_per_tok: 2, first_k_dense_replace: 1, vocab_size: 1000}",
         191136, {36016, 27056}},
        // mistral3 around that mistral4 text model (Mistral Small 4): 191,136 + the Pixtral tower and projector
        // above 8,960.
        {"mistral3_mistral4",
         "{model_type: mistral3, text_config: {model_type: mistral4, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 4, q_lora_rank: 32, kv_lora_rank: 16,"
         " qk_rope_head_dim: 8, qk_nope_head_dim: 8, v_head_dim: 16, moe_intermediate_size: 16, n_routed_experts: 4,"
         " n_shared_experts: 1, num_experts_per_tok: 2, first_k_dense_replace: 1, vocab_size: 1000},"
         " vision_config: {model_type: pixtral, hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, patch_size: 2, image_size: 8}}",
         200096, {36016, 27056}},
        // mllama: blocks 36,992 and, at cross_attention_layers [1], 36,992 + q_norm/k_norm 32 = 37,024; embedding
        // (1000 + 8)*64, head 64,000, norm 64, two gates: 202,594. Tower: Conv2d 3*2*2*16 = 192, class 16, gated
        // positions 1 + 5*16 + 3*2*5*16 = 561 (patches (4/2)^2 + 1 = 5, 2 ratios + 1 rows, 2 tiles), pre/post tile
        // embeddings 2*(3*2*16 + 1) = 194, layernorm_pre/post 64, 2 blocks (1 local, 1 global) of 4*16*16 + fc1/fc2
        // 1,072 + LayerNorms 64 = 2,160, global gates 2 -> 5,349; projector [32 -> 64] + 64 = 2,112.
        {"mllama",
         "{model_type: mllama, text_config: {model_type: mllama_text_model, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 1000,"
         " cross_attention_layers: [1]}, vision_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_global_layers: 1, attention_heads: 2, image_size: 4, patch_size: 2, max_num_tiles: 2,"
         " vision_output_dim: 32, supported_aspect_ratios: [[1, 1], [1, 2]]}}",
         210055, {36992, 37024}},
        // moss_vl: the qwen3 text model (blocks 37,024, the cross-attention layer [1] the same shapes), untied:
        // 2*37,024 + 128,000 + 64 = 202,112; two gates + separator token 64 = 66. Tower: Conv3d [3*1*2*2 -> 32] with
        // bias 416, positions 16*32 = 512, block 4*32*32 + 128 + fc1/fc2 4,192 + LayerNorms 128 = 8,544 -> 9,472;
        // merger over 2 features: LayerNorms 2*64 = 128, fc1 [256 -> 256] 65,792, fc2 [256 -> 64] 16,448 -> 82,368.
        {"moss_vl",
         "{model_type: moss_vl, tie_word_embeddings: false, text_config: {model_type: moss_vl_text, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " vocab_size: 1000, cross_attention_layers: [1]}, vision_config: {depth: 1, hidden_size: 32,"
         " intermediate_size: 64, num_heads: 4, out_hidden_size: 64, patch_size: 2, spatial_merge_size: 2,"
         " temporal_patch_size: 1, in_channels: 3, num_position_embeddings: 16, deepstack_visual_indexes: [0]}}",
         294018, {37024, 37024}},
        // llama3_siglip2 (torchtitan's vlm experiment): the tiny llama 202,048; SigLIP2 encoder: patch Linear
        // [3*2*2 -> 16] + 16 = 208, positions 4*16 = 64, block 2,224, post_layernorm 32 -> 2,528; Projector
        // [16 -> 16] + 16 = 272 and [16 -> 64] + 64 = 1,088 -> 1,360.
        {"llama3_siglip2",
         "{model_type: llama3_siglip2, text_config: {model_type: llama, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 1000,"
         " tie_word_embeddings: false}, vision_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, num_patches: 4, num_channels: 3, patch_size: 2}}",
         205936, {36992, 36992}},
        // smolvlm: the tiny llama 202,048 (text_config without model_type: SmolVLMConfig's llama). Tower: patch Conv2d
        // 3*2*2*16 + 16 = 208, positions (5 // 2)^2 * 16 = 64 (floor division, as SmolVLMVisionEmbeddings), block
        // 2,224, post_layernorm 32 -> 2,528; connector proj [16 * 2^2 -> 64] without bias 4,096.
        {"smolvlm",
         "{model_type: smolvlm, scale_factor: 2, tie_word_embeddings: false, text_config: {hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,"
         " vocab_size: 1000}, vision_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, image_size: 5, patch_size: 2}}",
         208672, {36992, 36992}},
        // internvl, qwen2 text: 2*37,120 + 128,064 = 202,304. Tower with every switch away from its default: cls 16,
        // mask_token 16, patch Conv2d 208, positions (2*2 + 1)*16 = 80, one block q/k/v with biases 3*272 + projection
        // 272 + fc1 544 + fc2 528 + q_norm/k_norm 32 + two RMSNorms 32 + lambda_1/lambda_2 32 = 2,256, final LayerNorm
        // 32 (use_mean_pooling false) -> 2,608; projector (r = int(1 / 0.5) = 2): LayerNorm 2*64 + [64 -> 64] + 64 +
        // [64 -> 64] + 64 = 8,448.
        {"internvl",
         "{model_type: internvl, downsample_ratio: 0.5, text_config: {model_type: qwen2, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,"
         " vocab_size: 1000, tie_word_embeddings: false}, vision_config: {hidden_size: 16, intermediate_size: 32,"
         " num_hidden_layers: 1, num_attention_heads: 2, image_size: [4, 4], patch_size: 2, attention_bias: true,"
         " use_qk_norm: true, norm_type: rms_norm, use_mean_pooling: false, use_mask_token: true}}",
         213360, {37120, 37120}},
        // glm4v: head_dim = 64 / 4 = 16 whatever head_dim says, q/k/v biases whatever attention_bias says: q 4,160,
        // k/v 2*2,080, o 4,096, MLP 3*64*128 = 24,576, four RMSNorms 256 -> 37,248; untied 2*37,248 + 128,064 =
        // 202,560. Tower: positions (4 // 2)^2*16 = 64, Conv3d 3*2*2*2*16 + 16 = 400, post_conv_layernorm 16, block
        // norms 32 + qkv 768 + proj 256 + MLP 3*16*24 = 1,152 -> 2,208, post_layernorm 16 -> 2,704; downsample
        // [16*2*2 -> 24] + 24 = 1,560, merger proj 576 + LayerNorm 48 + gate/up/down 3*24*40 = 2,880 -> 5,064.
        {"glm4v",
         "{model_type: glm4v, text_config: {model_type: glm4v_text, hidden_size: 64, intermediate_size: 128,"
         " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32, attention_bias: false,"
         " vocab_size: 1000}, vision_config: {depth: 1, hidden_size: 16, out_hidden_size: 24, intermediate_size: 40,"
         " num_heads: 2, image_size: 4, patch_size: 2}}",
         210328, {37248, 37248}},
        // glm46v: the same modules (Glm46V reuses Glm4v's), tied at the top level: 210,328 - 64,000.
        {"glm46v",
         "{model_type: glm46v, tie_word_embeddings: true, text_config: {model_type: glm4v_text, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2,"
         " vocab_size: 1000}, vision_config: {depth: 1, hidden_size: 16, out_hidden_size: 24, intermediate_size: 40,"
         " num_heads: 2, image_size: 4, patch_size: 2}}",
         146328, {37248, 37248}},
        // voxtral: the tiny llama (head_dim given: VoxtralConfig would fill 128), untied although the top level says
        // tie (the causal LM ties from text_config) -> 202,048. Audio encoder: conv1 4*3*16 + 16 = 208, conv2 16*3*16
        // + 16 = 784, positions 6*16 = 96, block q/v/out with biases 816 + k 256 + LayerNorms 64 + fc1 544 + fc2 528
        // = 2,208, final LayerNorm 32 -> 3,328; projector [32 -> 64] + [64 -> 64], no biases, 6,144.
        {"voxtral",
         "{model_type: voxtral, tie_word_embeddings: true, text_config: {model_type: llama, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " vocab_size: 1000}, audio_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, num_mel_bins: 4, max_source_positions: 6}}",
         211520, {36992, 36992}},
        // ---- dense Llama-layout families (src/spec/hf_config_dense.cpp) ----
        // apertus: head_dim 16, kv 2: q 4,096 + k 2,048 + v 2,048 + o 4,096 = 12,288, q_norm/k_norm 2*16 = 32;
        // plain MLP up + down 2*64*160 = 20,480; xIELU alpha_p + alpha_n 2; 2 RMSNorms 128 -> 32,930.
        // Untied: 2*32,930 + 64,000 + 64,000 + 64 = 193,924.
        {"apertus_xielu_qk_norm",
         "{model_type: apertus, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000}",
         193924, {32930, 32930}},
        // arcee: attention 12,288 + q/k/v/o biases 64+32+32+64 = 12,480; plain MLP 20,480 + up/down biases 160+64 =
        // 20,704; norms 128 -> 33,312. Untied: 2*33,312 + 128,064 = 194,688.
        {"arcee_relu2_biases",
         "{model_type: arcee, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, attention_bias: true, mlp_bias: true}",
         194688, {33312, 33312}},
        // cohere2: head_dim is hidden/heads = 16 whatever head_dim says; attention 12,288; gated MLP 3*64*128 =
        // 24,576; one LayerNorm, weight only, 64 -> 36,928. Tied by default: 4*36,928 + 64,000 + final norm 64 =
        // 211,776.
        {"cohere2_parallel_one_norm_tied",
         "{model_type: cohere2, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 4, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 32, vocab_size: 1000, sliding_window: 16}",
         211776, {36928, 36928, 36928, 36928}},
        // glm4: q/k/v biases by default 64+32+32 (o_proj none): 12,416; gate_up_proj 64*256 + down 128*64 = 24,576;
        // 4 RMSNorms 256 -> 37,248. Untied: 2*37,248 + 128,064 = 202,560.
        {"glm4_four_norms_qkv_bias",
         "{model_type: glm4, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, vocab_size: 1000}",
         202560, {37248, 37248}},
        // hunyuan_v1_dense: attention 12,288 + query/key layernorms 2*16 = 12,320; MLP 24,576; norms 128 -> 37,024.
        // Tied: 2*37,024 + 64,000 + 64 = 138,112.
        {"hunyuan_v1_dense_qk_norm_tied",
         "{model_type: hunyuan_v1_dense, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 1000, tie_word_embeddings: true}",
         138112, {37024, 37024}},
        // nemotron: attention 12,288; plain MLP 20,480; two LayerNorm1P with weight and bias 2*128 = 256 -> 33,024.
        // Untied: 2*33,024 + 128,000 + final LayerNorm 128 = 194,176.
        {"nemotron_relu2_layernorm",
         "{model_type: nemotron, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000}",
         194176, {33024, 33024}},
        // olmo3: attention 12,288 + q_norm over 4*16 = 64 + k_norm over 2*16 = 32 -> 12,384; MLP 24,576; norms 128 ->
        // 37,088. Untied: 4*37,088 + 128,064 = 276,416.
        {"olmo3_full_width_qk_norm",
         "{model_type: olmo3, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 4, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000}",
         276416, {37088, 37088, 37088, 37088}},
        // seed_oss: q/k/v biases by default 128, o_proj none (attention_out_bias false), MLP none: 12,416 + 24,576 +
        // norms 128 = 37,120. Untied: 2*37,120 + 128,064 = 202,304.
        {"seed_oss_qkv_bias",
         "{model_type: seed_oss, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, vocab_size: 1000}",
         202304, {37120, 37120}},
        // mamba: MambaBlock = RMSNorm 64 + MambaMixer with I = 2*64 = 128, N 16, K 4, R = ceil(64/16) = 4: in_proj
        // 64*256 = 16,384; conv1d 128*4 + bias 128 = 640; x_proj 128*(4 + 32) = 4,608; dt_proj 4*128 + 128 = 640;
        // A_log 128*16 = 2,048; D 128; out_proj 128*64 = 8,192 -> 32,704. Tied: 2*32,704 + 64,000 + 64 = 129,472.
        {"mamba_selective_scan_tied",
         "{model_type: mamba, hidden_size: 64, num_hidden_layers: 2, vocab_size: 1000}", 129472, {32704, 32704}},
        // mamba2: I = 128 in H = 8 heads, G = 2 groups of N = 16: in_proj 64*(256 + 64 + 8) = 20,992; conv1d over
        // 128 + 64 = 192 channels 192*4 + 192 = 960; dt_bias, A_log, D 3*8 = 24; gated norm 128; out_proj 8,192;
        // block norm 64 -> 30,360. Untied: 2*30,360 + 128,000 + 64 = 188,784.
        {"mamba2_ssd_groups",
         "{model_type: mamba2, hidden_size: 64, num_hidden_layers: 2, vocab_size: 1000, num_heads: 8, head_dim: 16,"
         " state_size: 16, n_groups: 2}",
         188784, {30360, 30360}},
        // jamba, attention at i % 2 == 1, experts at i % 2 == 0: Mamba layer = MambaMixer (I 128, N 8, R 4: 16,384 +
        // 640 + 128*20 + 640 + 1,024 + 128 + 8,192 = 29,568) + dt/B/C layernorms 4 + 8 + 8 = 29,588, 4 experts of
        // 3*64*128 + router 256 = 98,560, norms 128 -> 128,276; attention layer 12,288 + MLP 24,576 + 128 = 36,992.
        // Untied: 2*(128,276 + 36,992) + 128,000 + 64 = 458,600.
        {"jamba_periods",
         "{model_type: jamba, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 4, num_attention_heads: 4,"
         " num_key_value_heads: 2, attn_layer_period: 2, attn_layer_offset: 1, expert_layer_period: 2,"
         " expert_layer_offset: 0, num_experts: 4, num_experts_per_tok: 2, mamba_d_state: 8, vocab_size: 1000}",
         458600, {128276, 36992, 128276, 36992}},
        // falcon_h1: attention 12,288 + MLP 24,576 + Mamba-2 beside it (I 128, H 8, G 1, N 16: in_proj 64*(256 + 32
        // + 8) = 18,944, conv1d 160*4 + 160 = 800, 24, gated norm 128 with mamba_rms_norm, out_proj 8,192 = 28,088)
        // + 2 norms 128 = 65,080. Untied: 2*65,080 + 128,064 = 258,224.
        {"falcon_h1_parallel_mamba",
         "{model_type: falcon_h1, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, vocab_size: 1000, mamba_d_ssm: 128, mamba_n_heads: 8, mamba_d_state: 16,"
         " mamba_rms_norm: true}",
         258224, {65080, 65080}},
        // granitemoehybrid: every layer 4 experts of 3*64*32 = 24,576 + router 256 + shared MLP 3*64*64 = 12,288 ->
        // 37,120, norms 128; the mamba layer's mixer 28,088 (as falcon_h1's) -> 65,336; the attention layer 12,288 ->
        // 49,536. Tied: 114,872 + 64,000 + 64 = 178,936.
        {"granitemoehybrid_layer_types",
         "{model_type: granitemoehybrid, hidden_size: 64, intermediate_size: 32, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, num_local_experts: 4, num_experts_per_tok: 2,"
         " shared_intermediate_size: 64, layer_types: [mamba, attention], mamba_n_heads: 8, mamba_d_state: 16,"
         " vocab_size: 1000, tie_word_embeddings: true}",
         178936, {65336, 49536}},
        // nemotron_h "M*-": Mamba-2 block 30,360 (as mamba2's), attention 12,288 + norm 64, relu2 MLP 2*64*160 +
        // norm 64 = 20,544. Untied: 63,256 + 128,064 = 191,320.
        {"nemotron_h_pattern",
         "{model_type: nemotron_h, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 3,"
         " hybrid_override_pattern: 'M*-', num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " mamba_num_heads: 8, mamba_head_dim: 16, n_groups: 2, ssm_state_size: 16, chunk_size: 128, vocab_size: 1000}",
         191320, {30360, 12352, 20544}},
        // nemotron_h "ME*" with a latent MoE (NemotronHMoE): Mamba-2 block 30,360 as above; E: 4 non-gated experts
        // over the 16-wide latent 4*2*16*16 = 2,048, router 4*64 + correction bias 4 = 260, fc1/fc2_latent_proj
        // 2*64*16 = 2,048, shared expert up/down 2*64*48 = 6,144, norm 64 -> 10,564; attention 12,352.
        // Untied: 53,276 + 128,064 = 181,340.
        {"nemotron_h_latent_moe",
         "{model_type: nemotron_h, hidden_size: 64, num_hidden_layers: 3, hybrid_override_pattern: 'ME*',"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, mamba_num_heads: 8, mamba_head_dim: 16,"
         " n_groups: 2, ssm_state_size: 16, chunk_size: 128, vocab_size: 1000, n_routed_experts: 4,"
         " num_experts_per_tok: 2, moe_intermediate_size: 16, moe_shared_expert_intermediate_size: 48,"
         " moe_latent_size: 16}",
         181340, {30360, 10564, 12352}},
        // qwen3_next, interval 2, experts every 2nd block: block 0 Gated DeltaNet (key heads 2 of 8, value heads 4 of
        // 16: in_proj_qkvz 64*(2*16 + 2*64) = 10,240, in_proj_ba 64*8 = 512, conv1d (2*16 + 64)*4 = 384, dt_bias and
        // A_log 8, norm 16, out_proj 64*64 = 4,096 -> 15,256) + dense MLP 3*64*128 = 24,576 + norms 128 = 39,960;
        // block 1 gated attention (q_proj 64*2*64 = 8,192, k 2,048, v 2,048, o 4,096, q/k norms 32 -> 16,416) + MoE
        // (experts 4*3*64*16 = 12,288, router 256, shared 3*64*32 = 6,144, shared gate 64 -> 18,752) + 128 = 35,296.
        // Untied: 75,256 + 128,064 = 203,320.
        {"qwen3_next_hybrid",
         "{model_type: qwen3_next, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, linear_num_key_heads: 2,"
         " linear_num_value_heads: 4, linear_key_head_dim: 8, linear_value_head_dim: 16, linear_conv_kernel_dim: 4,"
         " full_attention_interval: 2, num_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 16,"
         " shared_expert_intermediate_size: 32, decoder_sparse_step: 2, vocab_size: 1000}",
         203320, {39960, 35296}},
        // kimi_linear (vLLM kda.py KimiDeltaAttention, kimi_linear.py): blocks 1, 2 KDA (2 heads of 8, I = 16: q, k, v
        // 3*64*16 = 3,072, b_proj 64*2 = 128, f_a and g_a 2*64*8 = 1,024, f_b and g_b 2*8*16 = 256, o_proj 16*64 =
        // 1,024, q/k/v convolutions 3*16*4 = 192, dt_bias 16, A_log 2, o_norm 8 -> 5,722), block 3 MLA (q_proj
        // 64*4*12 = 3,072, kv_a_proj_with_mqa 64*20 = 1,280, kv_a_layernorm 16, kv_b_proj 16*4*16 = 1,024, o_proj
        // 32*64 = 2,048 -> 7,440). Block 0 dense MLP 3*64*128 = 24,576; blocks 1, 2 MoE: 4 experts 4*3*64*16 = 12,288,
        // gate 256 + e_score_correction_bias 4, 1 shared 3*64*16 = 3,072 -> 15,620; norms 128 each.
        // 5,722 + 24,576 + 128 = 30,426; 5,722 + 15,620 + 128 = 21,470; 7,440 + 15,620 + 128 = 23,188; untied + 128,064.
        {"kimi_linear_kda_mla",
         "{model_type: kimi_linear, hidden_size: 64, intermediate_size: 128, num_attention_heads: 4, kv_lora_rank: 16,"
         " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, q_lora_rank: null, num_experts: 4,"
         " num_experts_per_token: 2, moe_intermediate_size: 16, num_shared_experts: 1, first_k_dense_replace: 1,"
         " vocab_size: 1000, num_hidden_layers: 3, linear_attn_config: {num_heads: 2, head_dim: 8,"
         " short_conv_kernel_size: 4, kda_layers: [1, 2], full_attn_layers: [3]}}",
         203148, {30426, 21470, 23188}},
        // paddleocr_vl: the tiny llama's shapes at the top level (untied) -> 202,048; SigLIP tower without its head
        // (patch conv 3*14*14*16 + 16 = 9,424, positions (28/14)^2*16 = 64, block 2,224, post_layernorm 32 -> 11,744);
        // projector pre_norm 32 + linear_1 64*64 + 64 + linear_2 64*64 + 64 = 8,352.
        {"paddleocr_vl",
         "{model_type: paddleocr_vl, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000, tie_word_embeddings: false,"
         " vision_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1, num_attention_heads: 2,"
         " image_size: 28, patch_size: 14, spatial_merge_size: 2}}",
         222144, {36992, 36992}},
        // qwen3_5_text: the same mixers, dense MLPs: 39,960 and 16,416 + 24,576 + 128 = 41,120. Tied: + 64,064.
        {"qwen3_5_text_dense",
         "{model_type: qwen3_5_text, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, linear_num_key_heads: 2,"
         " linear_num_value_heads: 4, linear_key_head_dim: 8, linear_value_head_dim: 16,"
         " layer_types: [linear_attention, full_attention], vocab_size: 1000, tie_word_embeddings: true}",
         145144, {39960, 41120}},
        // qwen3_5_moe_text: MoE (18,752, as above) in every block: 15,256 + 18,752 + 128 = 34,136 and 16,416 +
        // 18,752 + 128 = 35,296. Untied: 69,432 + 128,064 = 197,496.
        {"qwen3_5_moe_text_sparse",
         "{model_type: qwen3_5_moe_text, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4,"
         " num_key_value_heads: 2, head_dim: 16, linear_num_key_heads: 2, linear_num_value_heads: 4,"
         " linear_key_head_dim: 8, linear_value_head_dim: 16, full_attention_interval: 2, num_experts: 4,"
         " num_experts_per_tok: 2, moe_intermediate_size: 16, shared_expert_intermediate_size: 32, vocab_size: 1000}",
         197496, {34136, 35296}},
        // qwen3_5: the qwen3_5_text model above (145,144) + the qwen3_vl tower without deepstack mergers: Conv3d 400,
        // positions 64, block 2,224, merger 8,352 = 11,040.
        {"qwen3_5_vision",
         "{model_type: qwen3_5, tie_word_embeddings: true, text_config: {model_type: qwen3_5_text, hidden_size: 64,"
         " intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " linear_num_key_heads: 2, linear_num_value_heads: 4, linear_key_head_dim: 8, linear_value_head_dim: 16,"
         " layer_types: [linear_attention, full_attention], vocab_size: 1000}, vision_config: {depth: 1,"
         " hidden_size: 16, intermediate_size: 32, num_heads: 2, out_hidden_size: 64, patch_size: 2,"
         " spatial_merge_size: 2, temporal_patch_size: 2, in_channels: 3, num_position_embeddings: 4}}",
         156184, {39960, 41120}},
        // qwen3_5_moe: the qwen3_5_moe_text model above (197,496) + the same tower 11,040.
        {"qwen3_5_moe_vision",
         "{model_type: qwen3_5_moe, tie_word_embeddings: false, text_config: {model_type: qwen3_5_moe_text,"
         " hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16,"
         " linear_num_key_heads: 2, linear_num_value_heads: 4, linear_key_head_dim: 8, linear_value_head_dim: 16,"
         " full_attention_interval: 2, num_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 16,"
         " shared_expert_intermediate_size: 32, vocab_size: 1000}, vision_config: {depth: 1, hidden_size: 16,"
         " intermediate_size: 32, num_heads: 2, out_hidden_size: 64, patch_size: 2, spatial_merge_size: 2,"
         " temporal_patch_size: 2, in_channels: 3, num_position_embeddings: 4, deepstack_visual_indexes: []}}",
         208536, {34136, 35296}},
        // lfm2: Lfm2MLP width int(2*200/3) = 133 rounded up to 32 -> 160: 3*64*160 = 30,720. Short conv block: in_proj
        // 64*192 = 12,288, conv 64*3 = 192, out_proj 4,096 -> 16,576, + MLP + 2 norms 128 = 47,424. Attention block:
        // q 4,096, k 2,048, v 2,048, out_proj 4,096, q/k layernorms 32 -> 12,320, + 30,848 = 43,168. Tied: + 64,064.
        {"lfm2_short_conv",
         "{model_type: lfm2, hidden_size: 64, intermediate_size: 200, block_multiple_of: 32, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, layer_types: [conv, full_attention], conv_L_cache: 3,"
         " vocab_size: 1000}",
         154656, {47424, 43168}},
        // ---- Gemma 4 (src/spec/hf_config_gemma4.cpp; modeling_gemma4.py, modeling_gemma4_unified.py) ----
        // gemma4, MoE with k_eq_v and a vision tower. Sliding layer (heads 4 x 16, kv 2): q 4,096 + k 2,048 + v 2,048
        // + o 4,096 = 12,288, q_norm/k_norm 2*16 = 32; dense MLP 3*64*32 = 6,144; experts 4*3*64*16 = 12,288; router
        // proj 64*4 = 256 + scale 64 + per_expert_scale 4; norms 7*64 = 448; layer_scalar 1 -> 31,525. Full layer
        // (global_head_dim 32, one global KV head, no v_proj): q 64*128 = 8,192 + k 64*32 = 2,048 + o 8,192 = 18,432,
        // q/k norms 64, the rest 19,205 -> 37,701. Tied embedding 64,000, final norm 64. Vision tower (h 16, 2 heads
        // of 8, clipped linears, standardize): input_proj 3*2*2*16 = 192, position table 2*10*16 = 320, block q/k/v/o
        // 4*256 = 1,024 + q/k norms 16 + 4 norms 64 + MLP 3*16*32 = 1,536 + 7 clipped linears x 4 buffers 28 = 2,668,
        // std_bias/std_scale 32 -> 3,212; projector 16*64 = 1,024. Total 31,525 + 37,701 + 64,064 + 4,236 = 137,526.
        {"gemma4_moe_k_eq_v_vision",
         "{model_type: gemma4, text_config: {hidden_size: 64, intermediate_size: 32, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, global_head_dim: 32,"
         " num_global_key_value_heads: 1, attention_k_eq_v: true, layer_types: [sliding_attention, full_attention],"
         " vocab_size: 1000, hidden_size_per_layer_input: 0, enable_moe_block: true, num_experts: 4, top_k_experts: 2,"
         " moe_intermediate_size: 16}, vision_config: {hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,"
         " num_attention_heads: 2, num_key_value_heads: 2, head_dim: 8, patch_size: 2, position_embedding_size: 10,"
         " standardize: true, use_clipped_linears: true}}",
         137526, {31525, 37701}},
        // gemma4_text, dense, no k_eq_v, no layer_types: layer 0 sliding (1 % 6 != 0), the last layer forced full.
        // Sliding: attention 12,288 + q/k norms 32 + MLP 3*64*128 = 24,576 + 4 norms 256 + layer_scalar 1 = 37,153.
        // Full (head_dim 32, kv 2): q 8,192 + k 4,096 + v 4,096 + o 8,192 = 24,576 + 64 + 24,576 + 256 + 1 = 49,473.
        // Untied: 37,153 + 49,473 + 64,000 + 64,000 + 64 = 214,690.
        {"gemma4_text_default_layer_types",
         "{model_type: gemma4_text, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, global_head_dim: 32, vocab_size: 1000,"
         " hidden_size_per_layer_input: 0, tie_word_embeddings: false}",
         214690, {37153, 49473}},
        // gemma4_unified: sliding 37,153 (as above); full with k_eq_v and one KV head: q 8,192 + k 2,048 + o 8,192 =
        // 18,432 + 64 + 24,576 + 256 + 1 = 43,329. Tied 64,000 + 64. Embedders: merged patch 2*2 = 4 -> 4*4*3 = 48
        // pixels; LayerNorm 96 + Dense 48*64 + 64 = 3,136 + LayerNorm 128 + positions 10*2*64 = 1,280 + LayerNorm 128
        // = 4,768; projections vision 64*64 = 4,096 + audio 8*64 = 512. Total 80,482 + 64,064 + 9,376 = 153,922.
        {"gemma4_unified_embedders",
         "{model_type: gemma4_unified, text_config: {hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, global_head_dim: 32,"
         " num_global_key_value_heads: 1, attention_k_eq_v: true, layer_types: [sliding_attention, full_attention],"
         " vocab_size: 1000}, vision_config: {patch_size: 2, pooling_kernel_size: 2, mm_embed_dim: 64,"
         " mm_posemb_size: 10, output_proj_dims: 64}, audio_config: {audio_embed_dim: 8}}",
         153922, {37153, 43329}},
        // gemma4_unified_text: the same text model alone: 37,153 + 43,329 + 64,000 + 64 = 144,546.
        {"gemma4_unified_text_k_eq_v",
         "{model_type: gemma4_unified_text, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
         " num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, global_head_dim: 32,"
         " num_global_key_value_heads: 1, attention_k_eq_v: true, layer_types: [sliding_attention, full_attention],"
         " vocab_size: 1000}",
         144546, {37153, 43329}},
    };
}

TEST(ModelParams, TinyConfigsOfEveryFamilyMatchHandCounts) {
    std::set<std::string> families;
    for (const Tiny& t : tiny_models()) {
        SCOPED_TRACE(t.name);
        ftb::ModelSpec m;
        try {
            m = read(t.config);
        } catch (const std::exception& e) {
            ADD_FAILURE() << e.what();
            continue;
        }
        families.insert(m.architecture);
        EXPECT_EQ(m.total_params(), t.total);
        EXPECT_EQ(per_layer(m), t.layers);
    }
    for (const auto& f : ftb::supported_model_types()) {
        if (f != "mt5") {
            EXPECT_TRUE(families.count(f)) << "no hand-counted tiny config for " << f;
        }
    }
}

// MiMoConfig's num_nextn_predict_layers defaults to 0 (no MTP layer); each layer adds 45,504 (mimo_mtp_layer above)
// to the total and nothing to the blocks or the parameters a token touches.
TEST(ModelParams, MimoMtpLayersAreHeldOutsideTheBlocks) {
    const std::string shape =
        "{model_type: mimo, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
        " num_key_value_heads: 2, vocab_size: 1000, tie_word_embeddings: false";
    const ftb::ModelSpec none = read(shape + "}");
    EXPECT_EQ(none.total_params(), 202304);
    EXPECT_EQ(none.idle_params(), 0);
    const ftb::ModelSpec two = read(shape + ", num_nextn_predict_layers: 2}");
    EXPECT_EQ(two.total_params(), 202304 + 2 * 45504);
    EXPECT_EQ(two.idle_params(), 2 * 45504);
    EXPECT_EQ(two.num_layers(), 2u);
    EXPECT_EQ(two.active_params(), 202304);
    ASSERT_EQ(two.idle_linears.size(), 2u);
    EXPECT_EQ(two.idle_linears[0].name, "input_proj");
    EXPECT_EQ(two.idle_linears[0].in, 128);
    EXPECT_EQ(two.idle_linears[0].out, 64);
}

// NemotronHMoE's active parameters: the top-2 experts of the latent MoE above (2*2*16*16 = 1,024) in place of all
// four (2,048): 181,340 - 1,024 = 180,316.
TEST(ModelParams, NemotronHLatentMoeActiveParams) {
    const auto tiny = tiny_models();
    const auto it = std::find_if(tiny.begin(), tiny.end(),
                                 [](const Tiny& t) { return std::string(t.name) == "nemotron_h_latent_moe"; });
    ASSERT_NE(it, tiny.end());
    const ftb::ModelSpec m = read(it->config);
    EXPECT_EQ(m.active_params(), 180316);
    EXPECT_EQ(m.layer(1).expert_width(), 16);
    EXPECT_EQ(m.layer(1).latent_proj_params(), 2048);
}

// Nemotron 3 Super's safetensors headers (SOURCES.md): BF16 backbone 123,611,012,096 - MTP 2,942,324,736 =
// 120,668,687,360, plus the 40 MoE blocks' fp32 e_score_correction_bias (40 x 512 = 20,480) counted as DeepSeek-V3's
// are; active per token 12,770,216,960 without those biases (backbone less the inactive experts).
TEST(ModelParams, NemotronSuperMatchesItsHeaders) {
    const nlohmann::json j = model_json("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16");
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["params"]["total"].get<int64_t>(), 120668687360LL + 20480);
    EXPECT_EQ(j["params"]["active_per_token"].get<int64_t>(), 12770216960LL + 20480);
    EXPECT_EQ(j["layers"].get<int64_t>(), 88);
}

// mistral4 above: a token passes 2 of the 4 experts (2*3*64*16 = 6,144 of 12,288): 191,136 - 6,144 = 184,992.
// Mistral4Config's q_lora_rank (1024) is a latent, so the key is asked for, not read as none.
TEST(ModelParams, Mistral4ActiveParamsAndQLoraRank) {
    const auto tiny = tiny_models();
    const auto it = std::find_if(tiny.begin(), tiny.end(),
                                 [](const Tiny& t) { return std::string(t.name) == "mistral4_mla_moe"; });
    ASSERT_NE(it, tiny.end());
    const ftb::ModelSpec m = read(it->config);
    EXPECT_EQ(m.active_params(), 184992);
    EXPECT_FALSE(m.layer(1).router_bias);
    EXPECT_EQ(m.layer(1).q_lora_rank, 32);
    try {
        read("{model_type: mistral4, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
             " num_attention_heads: 4, kv_lora_rank: 16, vocab_size: 1000}");
        ADD_FAILURE() << "no error";
    } catch (const ftb::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("q_lora_rank"), std::string::npos) << e.what();
    }
}

TEST(ModelParams, MoeActiveParams) {
    // mixtral above: active per token = attention 12,288 + top-2 experts 2*18,432 + router 256 + norms 128 = 49,536
    // per block; 2*49,536 + 64,000 + 64,000 + 64 = 227,136.
    const auto tiny = tiny_models();
    const auto mixtral = std::find_if(tiny.begin(), tiny.end(),
                                      [](const Tiny& t) { return std::string(t.name) == "mixtral_experts_router"; });
    ASSERT_NE(mixtral, tiny.end());
    ftb::ModelSpec m = read(mixtral->config);
    ASSERT_EQ(m.architecture, "mixtral");
    EXPECT_EQ(m.active_params(), 227136);
    EXPECT_TRUE(m.is_moe());
}

// The same counts through `ftbound model CONFIG.json --json`.
TEST(ModelParams, CliReadsConfigFiles) {
    nlohmann::json j = model_json(spec_test::data_path("configs/tiny_llama.json"));
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["architecture"], "llama");
    EXPECT_EQ(j["params"]["total"], 238912);
    EXPECT_EQ(j["params"]["embedding"], 64000);
    EXPECT_EQ(j["params"]["per_layer"], nlohmann::json({55424, 55424}));
    EXPECT_EQ(j["layers"], 2);
    EXPECT_EQ(j["hidden_size"], 64);
    EXPECT_EQ(j["vocab_size"], 1000);
    nlohmann::json t5 = model_json(spec_test::data_path("configs/tiny_t5.json"));
    ASSERT_FALSE(t5.is_null());
    EXPECT_EQ(t5["params"]["total"], 103392);
    EXPECT_EQ(t5["layers"], 5);
    // The text form prints the exact total too.
    spec_test::CliResult text = run_ftbound({"model", spec_test::data_path("configs/tiny_llama.json")});
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_NE(text.out.find("238912"), std::string::npos) << text.out;
}

TEST(ModelParams, CliErrors) {
    struct Bad { std::string arg, where, reason; };
    const std::string not_a_config = spec_test::write_scratch("not_model.json", "{\"train\": 1}");
    const std::string list_doc = spec_test::write_scratch("list.json", "[1, 2]");
    for (const Bad& b : {Bad{"meta-llama/Llama-3.1-8", "command line: model: ", "(did you mean 'meta-llama/Llama-3.1-8B'?)"},
                         Bad{"no-such-dir/config.json", "command line: model: ", "not found"},
                         Bad{not_a_config, not_a_config + ": model_type: ", "missing"},
                         Bad{list_doc, list_doc + ": ", "must be a mapping"}}) {
        spec_test::CliResult r = run_ftbound({"model", b.arg, "--json"});
        EXPECT_EQ(r.exit_code, 2) << b.arg << ": " << describe(r);
        EXPECT_TRUE(r.out.empty()) << b.arg;
        EXPECT_NE(r.err.find("error: " + b.where), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(b.reason), std::string::npos) << r.err;
    }
}

// A count that does not fit int64 must be refused, not wrapped (hidden = vocab = 2^40: embedding 2^80).
TEST(ModelParams, ParameterCountOverflowIsAnInputError) {
    const std::string path = spec_test::write_scratch(
        "huge_dims.json",
        R"({"model_type": "llama", "hidden_size": 1099511627776, "intermediate_size": 128, "num_hidden_layers": 1,
            "num_attention_heads": 1, "vocab_size": 1099511627776})");
    spec_test::CliResult r = run_ftbound({"model", path, "--json"});
    if (r.exit_code == 0) {
        auto j = nlohmann::json::parse(r.out);
        ADD_FAILURE() << "BUG (model_spec.cpp: int64 overflow in parameter counts): accepted, total "
                      << j["params"]["total"] << ", embedding " << j["params"]["embedding"]
                      << " (true embedding is 2^80)";
    } else {
        EXPECT_EQ(r.exit_code, 2) << describe(r);
    }
}

// A config with 10^9 blocks must be refused as out of range (exit 2), not allocate per block until memory
// runs out (here the child is capped at 512 MiB, so today it ends as "internal error: out of memory", exit 1).
TEST(ModelParams, HugeLayerCountIsAnInputError) {
    for (const char* cfg :
         {R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1000000000,
              "num_attention_heads": 4, "vocab_size": 100})",
          R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 1000000000000, "n_head": 4, "vocab_size": 100})",
          R"({"model_type": "mimo", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 4, "vocab_size": 100, "num_nextn_predict_layers": 1000000000})",
          R"({"model_type": "t5", "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_decoder_layers": 1000000000,
              "num_heads": 4, "vocab_size": 100})"}) {
        const std::string path = spec_test::write_scratch("many_layers.json", cfg);
        spec_test::CliResult r = run_ftbound({"model", path}, 20, rlim_t(512) << 20);
        EXPECT_EQ(r.exit_code, 2) << "BUG (hf_config.cpp: layer counts up to 2^40 are allocated): " << describe(r);
        EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    }
}

// Linux paths are bytes; `model --json` echoes the path as the name and must still print valid JSON.
TEST(ModelParams, NonUtf8ConfigPathWithJson) {
    const std::string path = spec_test::write_scratch("tiny\xff.json", spec_test::slurp(spec_test::data_path("configs/tiny_llama.json")));
    spec_test::CliResult r = run_ftbound({"model", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << "BUG (cmd_model.cpp: nlohmann dump throws on a non-UTF-8 name): " << describe(r);
}

}  // namespace
