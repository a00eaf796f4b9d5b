// State-space and hybrid families (hf_config_hybrid.cpp): which mixer each layer runs, the mamba_ssm checkpoint
// format, the state-space core's FLOPs per token by hand, LoRA targets on a mixer. Parameter totals of tiny configs
// are in model_params_test.cpp; catalog models in data/models/SOURCES.md.
#include <gtest/gtest.h>

#include <string>

#include "ftbound/error.hpp"
#include "memory/training_setup.hpp"
#include "model/ssm.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "hf_config_test_util.hpp"
#include "timing/flops.hpp"

namespace {

using hf_config_test::error_of;
using hf_config_test::read;

const char* kMamba = "{model_type: mamba, hidden_size: 64, num_hidden_layers: 2, vocab_size: 1000}";

TEST(HybridFamilies, MambaSsmCheckpointPadsTheVocabularyAndTiesTheHead) {
    // state-spaces/mamba-* config.json: no model_type; 999 padded up to a multiple of 8 = 1000; the mixer and count
    // are transformers' MambaMixer's (model_params_test mamba_selective_scan_tied: 129,472).
    const ftb::ModelSpec m = read("{d_model: 64, n_layer: 2, vocab_size: 999, ssm_cfg: {}, rms_norm: true,"
                                  " residual_in_fp32: true, fused_add_norm: true, pad_vocab_size_multiple: 8}");
    EXPECT_EQ(m.architecture, "mamba_ssm");
    EXPECT_EQ(m.vocab, 1000);
    EXPECT_TRUE(m.tie_word_embeddings);
    ASSERT_EQ(m.num_layers(), 2u);
    EXPECT_EQ(m.layer(0).ssm, ftb::SsmKind::mamba1);
    EXPECT_EQ(m.layer(0).ssm_dt_rank, 4);
    EXPECT_FALSE(m.layer(0).has_attention());
    EXPECT_EQ(m.total_params(), read(kMamba).total_params());
    EXPECT_EQ(m.total_params(), 129472);
    EXPECT_NE(error_of("{d_model: 64, n_layer: 2, vocab_size: 999, ssm_cfg: {layer: Mamba3}}").find("ssm_cfg.layer"),
              std::string::npos);
}

TEST(HybridFamilies, JambaPeriodsPlaceAttentionAndExperts) {
    // JambaConfig defaults: attention at i % 8 == 4, experts at i % 2 == 1.
    const ftb::ModelSpec m = read(
        "{model_type: jamba, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 16, num_attention_heads: 4,"
        " num_key_value_heads: 2, vocab_size: 1000}");
    for (size_t i = 0; i < 16; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(m.layer(i).has_attention(), i % 8 == 4);
        EXPECT_EQ(m.layer(i).ssm == ftb::SsmKind::mamba1, i % 8 != 4);
        EXPECT_EQ(m.layer(i).experts, i % 2 == 1 ? 16 : 0);
    }
    EXPECT_TRUE(m.has_ssm());
}

TEST(HybridFamilies, FalconH1RunsAttentionAndMambaSideBySide) {
    const ftb::ModelSpec m = read(
        "{model_type: falcon_h1, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, num_attention_heads: 4,"
        " num_key_value_heads: 2, vocab_size: 1000, mamba_d_ssm: 96, mamba_n_heads: 6, mamba_d_state: 16}");
    EXPECT_TRUE(m.layer(0).has_attention());
    EXPECT_EQ(m.layer(0).ssm, ftb::SsmKind::mamba2);
    EXPECT_EQ(m.layer(0).ssm_inner, 96);          // mamba_d_ssm, not expand * hidden
    EXPECT_FALSE(m.layer(0).ssm_gated_norm);      // mamba_rms_norm defaults to false
    EXPECT_NE(error_of("{model_type: falcon_h1, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
                       " num_attention_heads: 4, vocab_size: 1000, mamba_d_ssm: 96, mamba_n_heads: 5,"
                       " mamba_d_state: 16}")
                  .find("heads do not divide"),
              std::string::npos);
}

TEST(HybridFamilies, NemotronHPatternAndRefusals) {
    const std::string base =
        "{model_type: nemotron_h, hidden_size: 64, intermediate_size: 160, num_hidden_layers: 3, num_attention_heads: 4,"
        " num_key_value_heads: 2, mamba_num_heads: 8, mamba_head_dim: 16, n_groups: 2, ssm_state_size: 16,"
        " chunk_size: 128, vocab_size: 1000, hybrid_override_pattern: ";
    const ftb::ModelSpec m = read(base + "'-M*'}");
    EXPECT_EQ(m.layer(0).ffn_intermediate, 160);
    EXPECT_EQ(m.layer(0).ffn_kind, ftb::FfnKind::plain);
    EXPECT_EQ(m.layer(1).ssm, ftb::SsmKind::mamba2);
    EXPECT_EQ(m.layer(1).ssm_chunk, 128);
    EXPECT_TRUE(m.layer(2).has_attention());
    EXPECT_EQ(m.activation, "relu2");
    EXPECT_NE(error_of(base + "'M*E'}").find("n_routed_experts: missing"), std::string::npos);
    EXPECT_NE(error_of(base + "'M*'}").find("3 in all"), std::string::npos);
    EXPECT_NE(error_of(base + "'M*X'}").find("unknown block 'X'"), std::string::npos);
}

// NemotronHMoE (modular_nemotron_h.py, transformers 008d9e95): non-gated experts over moe_latent_size, a router with a
// correction bias, a non-gated shared expert; layers_block_type names the blocks as the pattern does.
TEST(HybridFamilies, NemotronHMoeBlocks) {
    const std::string base =
        "{model_type: nemotron_h, hidden_size: 64, num_hidden_layers: 3, num_attention_heads: 4,"
        " num_key_value_heads: 2, head_dim: 16, mamba_num_heads: 8, mamba_head_dim: 16, n_groups: 2,"
        " ssm_state_size: 16, chunk_size: 128, vocab_size: 1000, n_routed_experts: 4, moe_intermediate_size: 16,"
        " moe_shared_expert_intermediate_size: 48";
    const ftb::ModelSpec m = read(base + ", num_experts_per_tok: 2, moe_latent_size: 16, layers_block_type: [mamba, moe,"
                                         " attention]}");
    const ftb::LayerSpec& e = m.layer(1);
    EXPECT_EQ(m.layer(0).ssm, ftb::SsmKind::mamba2);
    EXPECT_TRUE(m.layer(2).has_attention());
    EXPECT_EQ(e.experts, 4);
    EXPECT_EQ(e.experts_per_token, 2);
    EXPECT_EQ(e.ffn_kind, ftb::FfnKind::plain);
    EXPECT_EQ(e.moe_latent, 16);
    EXPECT_TRUE(e.router_bias);
    EXPECT_EQ(e.shared_expert_intermediate, 48);
    // experts 4*2*16*16 + router 4*64 + 4 + latent projections 2*64*16 + shared 2*64*48 = 10,500 (+ the norm);
    // a token passes 2 of the experts: 10,500 - 1,024.
    EXPECT_EQ(e.ffn_params(), 10500);
    EXPECT_EQ(e.ffn_params_active(), 9476);
    // Without moe_latent_size the experts read the hidden state: 4*2*64*16 + 260 + 6,144 = 14,596.
    const ftb::ModelSpec wide = read(base + ", num_experts_per_tok: 2, hybrid_override_pattern: 'ME*'}");
    EXPECT_EQ(wide.layer(1).moe_latent, 0);
    EXPECT_EQ(wide.layer(1).ffn_params(), 14596);
    const std::string pattern = ", hybrid_override_pattern: 'ME*'";
    EXPECT_NE(error_of(base + pattern + ", num_experts_per_tok: 5}").find("exceeds the 4 routed experts"),
              std::string::npos);
    EXPECT_NE(error_of(base + pattern + ", num_experts_per_tok: 2, mlp_bias: true}").find("mlp_bias"), std::string::npos);
    EXPECT_NE(error_of(base + ", num_experts_per_tok: 2, layers_block_type: [mamba, moe, conv]}")
                  .find("unknown block 'conv'"),
              std::string::npos);
    EXPECT_NE(error_of("{model_type: nemotron_h, hidden_size: 64, num_hidden_layers: 1, vocab_size: 1000,"
                       " hybrid_override_pattern: E, n_routed_experts: 4, num_experts_per_tok: 2,"
                       " moe_intermediate_size: 16}")
                  .find("moe_shared_expert_intermediate_size: missing"),
              std::string::npos);
}

TEST(HybridFamilies, GraniteLayerTypesDefaultToMamba) {
    const ftb::ModelSpec m = read(
        "{model_type: granitemoehybrid, hidden_size: 64, intermediate_size: 32, num_hidden_layers: 2,"
        " num_local_experts: 0, shared_intermediate_size: 64, mamba_n_heads: 8, mamba_d_state: 16, vocab_size: 1000}");
    EXPECT_EQ(m.layer(1).ssm, ftb::SsmKind::mamba2);
    EXPECT_EQ(m.layer(1).experts, 0);
    EXPECT_EQ(m.layer(1).ffn_intermediate, 64);   // no experts: the shared MLP is the FFN
    EXPECT_NE(error_of("{model_type: granitemoehybrid, hidden_size: 64, num_hidden_layers: 2, vocab_size: 1000,"
                       " mamba_n_heads: 8, layer_types: [mamba, linear]}")
                  .find("expected mamba or attention"),
              std::string::npos);
}

TEST(HybridFamilies, StateSpaceCoreFlopsPerToken) {
    // Mamba-1 (I 128, N 16, K 4): conv 2*4*128 = 1,024; scan 7*128*16 + 3*128 = 14,720.
    const ftb::SsmCoreFlops m1 = ftb::ssm_core_forward_flops(read(kMamba).layer(0), 64);
    EXPECT_DOUBLE_EQ(m1.conv, 1024);
    EXPECT_DOUBLE_EQ(m1.scan, 14720);
    // Mamba-2 (I 128, H 8, G 2, N 16) over 64 tokens: chunk min(256, 64) = 64; conv over 192 channels 2*4*192 =
    // 1,536; SSD Q G N + Q I + 4 N I + 2 I = 2,048 + 8,192 + 8,192 + 256 = 18,688.
    const ftb::LayerSpec l2 = read("{model_type: mamba2, hidden_size: 64, num_hidden_layers: 2, vocab_size: 1000,"
                                   " num_heads: 8, head_dim: 16, state_size: 16, n_groups: 2}")
                                  .layer(0);
    const ftb::SsmCoreFlops m2 = ftb::ssm_core_forward_flops(l2, 64);
    EXPECT_DOUBLE_EQ(m2.conv, 1536);
    EXPECT_DOUBLE_EQ(m2.scan, 18688);
    EXPECT_DOUBLE_EQ(ftb::ssd_chunk(l2, 4096), 256);
    // 6N at 64 tokens: matmul weights = tied head 64,000 + 2 * (in_proj 16,384 + x_proj 4,608 + dt_proj 512 +
    // out_proj 8,192) = 123,392 -> 740,352; cores 3 * 2 * (1,024 + 14,720) = 94,464. 834,816.
    EXPECT_DOUBLE_EQ(ftb::six_n_flops_per_token(read(kMamba), 64), 834816);
}

TEST(HybridFamilies, LoraTargetsOnTheMixer) {
    const ftb::LayerSpec l = read(kMamba).layer(0);
    // in_proj: r (64 + 256); out_proj: r (128 + 64); attention and FFN bits adapt nothing in a Mamba block.
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("in_proj"), 8), 8 * (64 + 256));
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("mixer.out_proj"), 8), 8 * (128 + 64));
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::kQ | ftb::kK | ftb::kV | ftb::kO | ftb::kGate | ftb::kUp, 8), 0);
    // x_proj r (128 + 36), dt_proj r (4 + 128).
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::kSsmX | ftb::kSsmDt, 8), 8 * (128 + 36) + 8 * (4 + 128));
}

// LoRA on a latent MoE block (hidden 64, latent 16, 4 experts of 16, shared 48, rank 8): fc1/fc2_latent_proj by name
// 2 * 8 (64 + 16) = 1,280; up_proj adapts the 4 experts over the latent 4 * 8 (16 + 16) = 1,024 and the shared
// expert 8 (64 + 48) = 896; gate_proj adapts nothing (neither the experts nor the shared expert has a gate).
TEST(HybridFamilies, LoraTargetsOnTheLatentMoe) {
    const ftb::LayerSpec l = read(
        "{model_type: nemotron_h, hidden_size: 64, num_hidden_layers: 1, vocab_size: 1000, hybrid_override_pattern: E,"
        " n_routed_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 16, moe_shared_expert_intermediate_size: 48,"
        " moe_latent_size: 16}").layer(0);
    EXPECT_EQ(ftb::lora_target_bits("mixer.fc1_latent_proj"), uint32_t(ftb::kMoeLatent));
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("fc2_latent_proj"), 8), 1280);
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("up_proj"), 8), 1024 + 896);
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("gate_proj"), 8), 0);
}

}  // namespace
