// The layer composition of the mixture-of-experts families (hf_config_moe.cpp): which layers are sparse, which attend
// within a window or chunk, what the router and attention carry, what a config gets wrong; and catalog names of
// re-packaged copies (dequantized, linearized) resolving to the base model. Parameter totals are in
// model_params_test.cpp (tiny configs) and data/models/SOURCES.md (catalog models).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "memory/training_setup.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "hf_config_test_util.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace {

using hf_config_test::error_of;
using hf_config_test::read;

const char* kGptOss =
    "{model_type: gpt_oss, hidden_size: 64, intermediate_size: 16, num_hidden_layers: 4, num_attention_heads: 4,"
    " num_key_value_heads: 2, head_dim: 16, num_local_experts: 4, num_experts_per_tok: 2, vocab_size: 1000";

TEST(MoeFamilies, GptOssAlternatesSlidingAndFullLayersWithSinksAndBiasedExperts) {
    const ftb::ModelSpec m = read(std::string(kGptOss) + "}");
    ASSERT_EQ(m.num_layers(), 4u);
    // GptOssConfig: "sliding_attention" if (i + 1) % 2 else "full_attention", window 128 by default.
    EXPECT_EQ(m.layer(0).sliding_window, 128);
    EXPECT_EQ(m.layer(1).sliding_window, 0);
    EXPECT_EQ(m.layer(2).sliding_window, 128);
    EXPECT_EQ(m.layer(3).sliding_window, 0);
    for (const auto& l : m.layers) {
        EXPECT_TRUE(l.attention_sinks);
        EXPECT_TRUE(l.qkv_bias && l.o_bias && l.mlp_bias && l.router_bias);
        EXPECT_EQ(l.experts, 4);
        EXPECT_EQ(l.experts_per_token, 2);
    }
    // Active per token: attention 12,484 + top-2 experts 2*3,168 + router 260 + norms 128 = 19,208 per block.
    EXPECT_EQ(m.active_params(), 4 * 19208 + 128064);
}

TEST(MoeFamilies, GptOssLayerTypesAreReadAndChecked) {
    const ftb::ModelSpec m = read(std::string(kGptOss) +
                                  ", sliding_window: 8, layer_types: [full_attention, full_attention,"
                                  " sliding_attention, full_attention]}");
    EXPECT_EQ(m.layer(0).sliding_window, 0);
    EXPECT_EQ(m.layer(2).sliding_window, 8);
    const std::string e = error_of(std::string(kGptOss) + ", layer_types: [full_attention]}");
    EXPECT_NE(e.find("layer_types"), std::string::npos) << e;
    EXPECT_NE(e.find("4 in all"), std::string::npos) << e;
}

const char* kLlama4 =
    "{model_type: llama4_text, hidden_size: 64, intermediate_size: 16, intermediate_size_mlp: 128,"
    " num_hidden_layers: 8, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, num_local_experts: 4,"
    " num_experts_per_tok: 1, vocab_size: 1000, attention_chunk_size: 8";

TEST(MoeFamilies, Llama4InterleavesMoeLayersAndLeavesChunkingOutOfNoPeLayers) {
    const ftb::ModelSpec m = read(std::string(kLlama4) + ", interleave_moe_layer_step: 2}");
    for (size_t i = 0; i < m.num_layers(); ++i) {
        SCOPED_TRACE(i);
        const auto& l = m.layer(i);
        const bool sparse = i % 2 == 1;   // range(step - 1, layers, step)
        EXPECT_EQ(l.experts, sparse ? 4 : 0);
        EXPECT_EQ(l.ffn_intermediate, sparse ? 16 : 128);
        EXPECT_EQ(l.shared_expert_intermediate, sparse ? 16 : 0);
        EXPECT_FALSE(l.router_bias);
        // no_rope_layer_interval 4: layers 3 and 7 are NoPE and attend over the whole sequence.
        EXPECT_EQ(l.sliding_window, (i + 1) % 4 == 0 ? 0 : 8);
    }
}

TEST(MoeFamilies, Llama4ExplicitLayerListsWinAndAreChecked) {
    const ftb::ModelSpec m =
        read(std::string(kLlama4) + ", moe_layers: [0], no_rope_layers: [0, 1, 1, 1, 1, 1, 1, 1]}");
    EXPECT_EQ(m.layer(0).experts, 4);
    EXPECT_EQ(m.layer(1).experts, 0);
    EXPECT_EQ(m.layer(0).sliding_window, 0);
    EXPECT_EQ(m.layer(3).sliding_window, 8);
    const std::string e = error_of(std::string(kLlama4) + ", no_rope_layers: [1, 0]}");
    EXPECT_NE(e.find("no_rope_layers"), std::string::npos) << e;
}

const char* kMla =
    "{hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16, n_routed_experts: 4,"
    " n_shared_experts: 2, num_hidden_layers: 3, num_attention_heads: 4, kv_lora_rank: 16, q_lora_rank: null,"
    " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, vocab_size: 1000";

TEST(MoeFamilies, DeepseekV2HasNoCorrectionBiasAndEveryLayerSparseByDefault) {
    const ftb::ModelSpec m = read(std::string(kMla) + ", model_type: deepseek_v2, num_experts_per_tok: 2}");
    for (const auto& l : m.layers) {
        EXPECT_EQ(l.experts, 4);   // DeepseekV2Config first_k_dense_replace 0
        EXPECT_FALSE(l.router_bias);
        EXPECT_EQ(l.shared_expert_intermediate, 2 * 16);
        EXPECT_EQ(l.q_lora_rank, 0);
    }
    // DeepseekV2Config leaves num_experts_per_tok None: a config without it cannot be costed.
    const std::string e = error_of(std::string(kMla) + ", model_type: deepseek_v2}");
    EXPECT_NE(e.find("num_experts_per_tok"), std::string::npos) << e;
}

TEST(MoeFamilies, DeepseekV3KeepsItsDenseLayersAndCorrectionBias) {
    const ftb::ModelSpec m = read(std::string(kMla) + ", model_type: deepseek_v3, num_experts_per_tok: 2}");
    EXPECT_EQ(m.layer(0).experts, 0);   // DeepseekV3Config first_k_dense_replace 3
    EXPECT_EQ(m.layer(2).experts, 0);
    const ftb::ModelSpec one = read(std::string(kMla) + ", model_type: deepseek_v3, first_k_dense_replace: 1}");
    EXPECT_EQ(one.layer(1).experts, 4);
    EXPECT_TRUE(one.layer(1).router_bias);
}

TEST(MoeFamilies, Glm4MoeNeedsItsDenseAndSharedLayout) {
    const std::string base =
        "{model_type: glm4_moe, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 16,"
        " num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 1000";
    EXPECT_NE(error_of(base + ", n_shared_experts: 1}").find("first_k_dense_replace"), std::string::npos);
    EXPECT_NE(error_of(base + ", first_k_dense_replace: 1}").find("n_shared_experts"), std::string::npos);
    const ftb::ModelSpec m = read(base + ", first_k_dense_replace: 1, n_shared_experts: 1}");
    EXPECT_EQ(m.layer(0).experts, 0);
    EXPECT_EQ(m.layer(1).experts, 128);   // Glm4MoeConfig: 128 routed experts, 8 per token
    EXPECT_EQ(m.layer(1).experts_per_token, 8);
    EXPECT_FALSE(m.layer(1).o_bias);
}

// A dequantized or linearized copy names the same shapes: its name resolves to the base model in the catalog.
TEST(MoeFamilies, RepackagedCopiesResolveToTheBaseModel) {
    const std::vector<std::pair<std::string, std::string>> copies = {
        {"axolotl-ai-co/gpt-oss-120b-dequantized", "openai/gpt-oss-120b"},
        {"axolotl-quants/Llama-4-Maverick-17B-128E-Linearized-bnb-nf4-bf16", "meta-llama/Llama-4-Maverick-17B-128E"},
    };
    for (const auto& [copy, base] : copies) {
        SCOPED_TRACE(copy);
        const spec_test::CliResult a = spec_test::run_ftbound({"model", copy, "--json"});
        const spec_test::CliResult b = spec_test::run_ftbound({"model", base, "--json"});
        ASSERT_EQ(a.exit_code, 0) << spec_test::describe(a);
        ASSERT_EQ(b.exit_code, 0) << spec_test::describe(b);
        EXPECT_EQ(nlohmann::json::parse(a.out)["params"]["total"], nlohmann::json::parse(b.out)["params"]["total"]);
    }
}

// LoRA targets with a module path (axolotl's Llama 4 examples: self_attn.q_proj, shared_expert.gate_proj) match the
// end of a module's name, as PEFT does: a path through the shared expert adapts the shared expert alone.
TEST(MoeFamilies, DottedLoraTargetsAndSharedExpertOnlyAdapters) {
    EXPECT_EQ(ftb::lora_target_bits("self_attn.q_proj"), ftb::kQ);
    EXPECT_EQ(ftb::lora_target_bits("mlp.down_proj"), ftb::kDown);
    EXPECT_EQ(ftb::lora_target_bits("shared_expert.gate_proj"), ftb::kSharedGate);
    EXPECT_EQ(ftb::lora_target_bits("mlp.shared_experts.down_proj"), ftb::kSharedDown);
    EXPECT_EQ(ftb::lora_target_bits("self_attn.rotary"), 0u);
    const ftb::ModelSpec m = read(std::string(kLlama4) + ", interleave_moe_layer_step: 2}");
    const ftb::LayerSpec& dense = m.layer(0);
    const ftb::LayerSpec& sparse = m.layer(1);
    const uint32_t shared = ftb::kSharedGate | ftb::kSharedUp | ftb::kSharedDown;
    // rank 2: the shared expert's gate, up (64 -> 16) and down (16 -> 64): 3 * 2 * (64 + 16) = 480; the dense MLP
    // and the 4 routed experts keep none.
    EXPECT_EQ(ftb::lora_params_in_layer(sparse, shared, 2), 480);
    EXPECT_EQ(ftb::lora_params_in_layer(dense, shared, 2), 0);
    // gate_proj without a path adapts all of them: 4 routed experts 4 * 2 * 80 + the shared 2 * 80 = 800.
    EXPECT_EQ(ftb::lora_params_in_layer(sparse, ftb::kGate, 2), 800);
}

TEST(MoeFamilies, AfmoeGatesAttentionAndPlacesGlobalLayers) {
    const ftb::ModelSpec m = read(
        "{model_type: afmoe, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 8, num_attention_heads: 4,"
        " num_key_value_heads: 2, head_dim: 16, vocab_size: 1000}");
    for (size_t i = 0; i < m.num_layers(); ++i) {
        SCOPED_TRACE(i);
        const auto& l = m.layer(i);
        EXPECT_TRUE(l.attention_output_gate);
        EXPECT_EQ(l.norms, 4);
        // AfmoeConfig: num_dense_layers 1, 64 experts top 6, 2 shared of 1408; every 4th layer global, window 1024.
        EXPECT_EQ(l.experts, i < 1 ? 0 : 64);
        EXPECT_EQ(l.shared_expert_intermediate, i < 1 ? 0 : 2 * 1408);
        EXPECT_EQ(l.sliding_window, (i + 1) % 4 == 0 ? 0 : 1024);
    }
    // A gate_proj target adapts the attention's gate_proj as well as the MLP's (PEFT matches the name's end): rank 2,
    // dense layer 0: attention gate 2 * (64 + 64) = 256 + MLP gate 2 * (64 + 128) = 384.
    EXPECT_EQ(ftb::lora_params_in_layer(m.layer(0), ftb::kGate, 2), 640);
}

// axolotl's FSDP2 example (fsdp_version: 2, fsdp_config.offload_params, dp_shard_size: 16): fully_shard = ZeRO-3 with
// parameters on the CPU, over 16 GPUs (2 nodes of 8).
TEST(MoeFamilies, AxolotlFsdp2ShardsAndCountsItsDevices) {
    const std::string file = std::string(ftb_test::source_dir()) +
                             "/tests/data/import/corpus/axolotl/gpt-oss__gpt-oss-120b-fft-fsdp2-offload.yaml";
    const spec_test::CliResult r = spec_test::run_ftbound({"plan", "--from", file, "--json"});
    ASSERT_EQ(r.exit_code, 0) << spec_test::describe(r);
    EXPECT_NE(r.err.find("fsdp_version: 2 (fully_shard) -> parallel.zero: 3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fsdp_config.offload_params: true -> offload.params: cpu"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("dp_shard_size: 16 -> hardware.nodes: 2"), std::string::npos) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["gpus"], 16);
}

}  // namespace
