// Linear-attention and short-convolution hybrids (hf_config_linear.cpp): which mixer and FFN each layer gets, the
// refusals naming their field, the mixers' core FLOPs per token by hand, LoRA targets on Gated DeltaNet and KDA. Parameter
// totals of tiny configs are in model_params_test.cpp; catalog models in data/models/SOURCES.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "ftbound/error.hpp"
#include "memory/training_setup.hpp"
#include "model/ssm.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "hf_config_test_util.hpp"
#include "test_paths.hpp"

namespace {

using hf_config_test::error_of;
using hf_config_test::read;

// Key heads 2 of 8, value heads 4 of 16 (I = 64), kernel 4.
const std::string kNext =
    "{model_type: qwen3_next, hidden_size: 64, intermediate_size: 128, num_attention_heads: 4, num_key_value_heads: 2,"
    " head_dim: 16, linear_num_key_heads: 2, linear_num_value_heads: 4, linear_key_head_dim: 8,"
    " linear_value_head_dim: 16, num_experts: 4, num_experts_per_tok: 2, moe_intermediate_size: 16,"
    " shared_expert_intermediate_size: 32, vocab_size: 1000";

const std::string kLfm2 =
    "{model_type: lfm2, hidden_size: 64, intermediate_size: 200, block_multiple_of: 32, num_attention_heads: 4,"
    " num_key_value_heads: 2, conv_L_cache: 3, vocab_size: 1000";

// Kimi Linear: KDA of 2 heads of 8 (I = 16), MLA of 4 heads (kv latent 16, nope 8, rope 4, v 8), 4 experts of 16
// (top 2, 1 shared), the first block dense; blocks 1 and 2 (1-based) KDA, block 3 MLA.
const std::string kKimi =
    "{model_type: kimi_linear, hidden_size: 64, intermediate_size: 128, num_attention_heads: 4, kv_lora_rank: 16,"
    " qk_nope_head_dim: 8, qk_rope_head_dim: 4, v_head_dim: 8, q_lora_rank: null, num_experts: 4,"
    " num_experts_per_token: 2, moe_intermediate_size: 16, num_shared_experts: 1, first_k_dense_replace: 1,"
    " vocab_size: 1000, num_hidden_layers: 3";
const std::string kKda = "{num_heads: 2, head_dim: 8, short_conv_kernel_size: 4";

TEST(LinearAttentionFamilies, Qwen3NextAttendsEveryFourthBlockByDefault) {
    // Qwen3NextConfig: full_attention_interval 4 -> blocks 3 and 7 attend; mlp_only_layers [5] keeps a dense MLP.
    const ftb::ModelSpec m = read(kNext + ", num_hidden_layers: 8, mlp_only_layers: [5]}");
    for (size_t i = 0; i < 8; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(m.layer(i).has_attention(), i % 4 == 3);
        EXPECT_EQ(m.layer(i).ssm == ftb::SsmKind::gated_delta, i % 4 != 3);
        EXPECT_EQ(m.layer(i).experts, i == 5 ? 0 : 4);
    }
    EXPECT_EQ(m.layer(5).ffn_intermediate, 128);
    EXPECT_EQ(m.layer(0).ssm_in_width(), 2 * 16 + 2 * 64 + 2 * 4);   // in_proj_qkvz + in_proj_ba
    EXPECT_EQ(m.layer(0).ssm_conv_width(), 2 * 16 + 64);
    EXPECT_TRUE(m.layer(3).attention_output_gate);   // q_proj's second half
    EXPECT_TRUE(m.layer(3).qk_norm);
    EXPECT_FALSE(m.tie_word_embeddings);
    EXPECT_TRUE(m.has_ssm());
}

TEST(LinearAttentionFamilies, QwenHybridRefusalsNameTheField) {
    EXPECT_NE(error_of(kNext + ", num_hidden_layers: 2, linear_num_value_heads: 5}").find("linear_num_value_heads"),
              std::string::npos);
    const std::string types = error_of(kNext + ", num_hidden_layers: 2, layer_types: [linear_attention, mamba]}");
    EXPECT_NE(types.find("layer_types"), std::string::npos);
    EXPECT_NE(types.find("expected linear_attention or full_attention"), std::string::npos);
    EXPECT_NE(error_of(kNext + ", num_hidden_layers: 2, layer_types: [full_attention]}").find("2 in all"),
              std::string::npos);
    EXPECT_NE(error_of(kNext + ", num_hidden_layers: 4, attention_bias: true}").find("attention_bias"), std::string::npos);
    EXPECT_NE(error_of(kNext + ", num_hidden_layers: 2, num_experts_per_tok: 8}").find("num_experts_per_tok"),
              std::string::npos);
    EXPECT_NE(error_of("{model_type: qwen3_5_moe, text_config: {hidden_size: 64}}").find("vision_config"),
              std::string::npos);
}

TEST(LinearAttentionFamilies, Lfm2BlocksFromFullAttnIdxsAndItsFfnWidth) {
    // The original schema: block_ff_dim 6656 -> int(2*6656/3) = 4437 -> rounded up to 256: 4608 (LFM2-350M).
    const ftb::ModelSpec m = read(
        "{model_type: lfm2, hidden_size: 1024, block_dim: 1024, block_ff_dim: 6656, num_attention_heads: 16,"
        " num_key_value_heads: 8, num_hidden_layers: 4, full_attn_idxs: [2], vocab_size: 1000, conv_bias: true}");
    EXPECT_EQ(m.layer(0).ffn_intermediate, 4608);
    EXPECT_EQ(m.layer(0).ssm, ftb::SsmKind::short_conv);
    EXPECT_TRUE(m.layer(2).has_attention());
    EXPECT_EQ(m.layer(2).head_dim, 64);
    EXPECT_TRUE(m.tie_word_embeddings);
    // conv_bias: in_proj 1024*3072 + 3072, conv 1024*3 + 1024, out_proj 1024*1024 + 1024 = 4,202,496.
    EXPECT_EQ(m.layer(0).ssm_params(), 4202496);
    EXPECT_EQ(read(kLfm2 + ", num_hidden_layers: 2, block_auto_adjust_ff_dim: false}").layer(0).ffn_intermediate, 200);
    EXPECT_NE(error_of(kLfm2 + ", num_hidden_layers: 2, conv_dim: 96}").find("conv_dim"), std::string::npos);
    EXPECT_NE(error_of(kLfm2 + ", num_hidden_layers: 2, layer_types: [conv, linear_attention]}")
                  .find("expected conv or full_attention"),
              std::string::npos);
    EXPECT_NE(error_of(kLfm2 + ", num_hidden_layers: 2, full_attn_idxs: [2]}").find("full_attn_idxs"), std::string::npos);
}

TEST(LinearAttentionFamilies, MixerCoreFlopsPerToken) {
    // Gated DeltaNet (H 4 value heads, d_k 8, d_v 16, conv over 96 channels, K 4) over 3 tokens: chunk min(64, 3) = 3;
    // conv 2*4*96 = 768; delta rule H (3 C d_k + 2 C d_v + 6 d_k d_v + 2 C^2/3) = 4 (72 + 96 + 768 + 6) = 3,768.
    const ftb::LayerSpec gdn = read(kNext + ", num_hidden_layers: 2}").layer(0);
    const ftb::SsmCoreFlops g = ftb::ssm_core_forward_flops(gdn, 3);
    EXPECT_DOUBLE_EQ(g.conv, 768);
    EXPECT_DOUBLE_EQ(g.scan, 3768);
    EXPECT_DOUBLE_EQ(ftb::delta_rule_chunk(4096), 64);
    // LFM2's short convolution (64 channels, 3 taps): conv 2*3*64 = 384; the gates B*x and C*y 2*64 = 128.
    const ftb::SsmCoreFlops s =
        ftb::ssm_core_forward_flops(read(kLfm2 + ", num_hidden_layers: 2, layer_types: [conv, full_attention]}").layer(0), 512);
    // Without layer_types or full_attn_idxs every LFM2 block attends (Lfm2Config.__init__).
    EXPECT_TRUE(read(kLfm2 + ", num_hidden_layers: 2}").layer(0).has_attention());
    EXPECT_DOUBLE_EQ(s.conv, 384);
    EXPECT_DOUBLE_EQ(s.scan, 128);
}

TEST(LinearAttentionFamilies, LoraOnGatedDeltaNetProjections) {
    const ftb::LayerSpec l = read(kNext + ", num_hidden_layers: 2}").layer(0);
    // in_proj_qkvz and in_proj_ba, two adapters: r (2*64 + 168); out_proj r (64 + 64); Qwen3.5's names too.
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("linear_attn.in_proj_qkvz"), 8), 8 * (128 + 168));
    EXPECT_EQ(ftb::lora_target_bits("in_proj_z"), ftb::lora_target_bits("in_proj_ba"));
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::lora_target_bits("out_proj"), 8), 8 * (64 + 64));
    EXPECT_EQ(ftb::lora_params_in_layer(l, ftb::kQ | ftb::kK | ftb::kV, 8), 0);   // no attention in this block
}

TEST(LinearAttentionFamilies, KimiLinearBlocksFromOneBasedLayerLists) {
    const ftb::ModelSpec m = read(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1, 2], full_attn_layers: [3]}}");
    ASSERT_EQ(m.num_layers(), 3u);
    EXPECT_EQ(m.layer(0).ssm, ftb::SsmKind::kda);
    EXPECT_EQ(m.layer(1).ssm, ftb::SsmKind::kda);
    EXPECT_EQ(m.layer(2).ssm, ftb::SsmKind::none);
    EXPECT_EQ(m.layer(2).kv_lora_rank, 16);
    EXPECT_EQ(m.layer(0).experts, 0);   // first_k_dense_replace 1
    EXPECT_EQ(m.layer(0).ffn_intermediate, 128);
    EXPECT_EQ(m.layer(1).experts, 4);
    EXPECT_EQ(m.layer(1).shared_expert_intermediate, 16);
    EXPECT_TRUE(m.layer(2).router_bias);   // e_score_correction_bias
    // Linears reading the block's input: q 16 + k 16 + v 16 + b 2 + f_a 8 + g_a 8 = 66; the three convolutions 48.
    EXPECT_EQ(m.layer(0).ssm_in_width(), 66);
    EXPECT_EQ(m.layer(0).ssm_conv_width(), 48);
    // 64*66 + o_proj 16*64 + conv 48*4 + f_b, g_b 2*8*16 + dt_bias 16 + A_log 2 + o_norm 8 = 5,722.
    EXPECT_EQ(m.layer(0).ssm_params(), 5722);
    EXPECT_EQ(m.layer(0).ssm_linear_params(), 64 * 66 + 16 * 64 + 2 * 8 * 16);
    EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(LinearAttentionFamilies, KimiLinearRefusalsNameTheField) {
    const std::string lists = ", kda_layers: [1, 2], full_attn_layers: [3]";
    EXPECT_NE(error_of(kKimi + "}").find("linear_attn_config"), std::string::npos);
    EXPECT_NE(error_of(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1, 2]}}").find("full_attn_layers"),
              std::string::npos);
    const std::string twice = error_of(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1, 2, 3], full_attn_layers: [3]}}");
    EXPECT_NE(twice.find("listed twice"), std::string::npos) << twice;
    const std::string range = error_of(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1, 2], full_attn_layers: [4]}}");
    EXPECT_NE(range.find("1-based"), std::string::npos) << range;
    const std::string gap = error_of(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1], full_attn_layers: [3]}}");
    EXPECT_NE(gap.find("layer 2 is in neither"), std::string::npos) << gap;
    EXPECT_NE(error_of(kKimi + ", linear_attn_config: " + kKda + lists + ", use_full_rank_gate: true}}").find("use_full_rank_gate"),
              std::string::npos);
    for (const char* k3 : {"mla_use_output_gate: true", "attn_res_block_size: 12", "routed_expert_hidden_size: 3584",
                           "num_nextn_predict_layers: 1"}) {
        const std::string e = error_of(kKimi + ", " + k3 + ", linear_attn_config: " + kKda + lists + "}}");
        EXPECT_NE(e.find(std::string(k3).substr(0, std::string(k3).find(':'))), std::string::npos) << k3 << ": " << e;
    }
    EXPECT_NE(error_of(kKimi + ", num_experts_per_token: 8, linear_attn_config: " + kKda + lists + "}}")
                  .find("num_experts_per_token"),
              std::string::npos);
}

TEST(LinearAttentionFamilies, KdaCoreFlopsAndLoraOnItsProjections) {
    const ftb::ModelSpec m = read(kKimi + ", linear_attn_config: " + kKda + ", kda_layers: [1, 2], full_attn_layers: [3]}}");
    const ftb::LayerSpec& kda = m.layer(0);
    // chunk min(64, 3) = 3, H 2, d_k = d_v = 8: 2 (3*3*8 + 2*3*8 + 6*64 + 2*9/3) = 1,020; conv 2*4*48 = 384.
    const ftb::SsmCoreFlops f = ftb::ssm_core_forward_flops(kda, 3);
    EXPECT_DOUBLE_EQ(f.conv, 384);
    EXPECT_DOUBLE_EQ(f.scan, 1020);
    // KDA's q_proj, k_proj, v_proj and o_proj carry attention's names: r (64 + 16) each.
    EXPECT_EQ(ftb::lora_params_in_layer(kda, ftb::lora_target_bits("q_proj"), 8), 8 * (64 + 16));
    EXPECT_EQ(ftb::lora_params_in_layer(kda, ftb::kQ | ftb::kK | ftb::kV | ftb::kO, 8), 4 * 8 * (64 + 16));
    EXPECT_EQ(ftb::lora_params_in_layer(kda, ftb::kSsmIn | ftb::kSsmOut, 8), 0);   // no in_proj or out_proj
    // all-linear reaches the gate linears too: b r (64 + 2), f_a and g_a 2 r (64 + 8), f_b and g_b 2 r (8 + 16).
    EXPECT_EQ(ftb::lora_params_in_layer(kda, ftb::kQ | ftb::kK | ftb::kV | ftb::kO | ftb::kSsmLinears | ftb::kMixerGates, 8),
              4 * 8 * (64 + 16) + 8 * 66 + 2 * 8 * 72 + 2 * 8 * 24);
    const auto inputs = ftb::adapted_inputs(kda, ftb::kV | ftb::kO, false);
    ASSERT_EQ(inputs.size(), 2u);
    EXPECT_EQ(inputs[0].in_features, 64);
    EXPECT_EQ(inputs[1].in_features, 16);
}

TEST(LinearAttentionFamilies, KimiLinearCatalogCounts) {
    // data/models/SOURCES.md: 49,122,681,728 in all; per token the embedding and head (2 x 377,487,360), 20 KDA
    // blocks, 7 MLA blocks, the dense first MLP and 26 x (8 + 1 shared) experts with the routers.
    std::ifstream in(std::string(ftb_test::source_dir()) + "/data/models/moonshotai/Kimi-Linear-48B-A3B-Instruct.json");
    std::stringstream text;
    text << in.rdbuf();
    const ftb::ModelSpec m = read(text.str());
    EXPECT_EQ(m.total_params(), 49122681728);
    EXPECT_EQ(m.active_params(), 3484459904);
    // bpc_engine's breakdown: one KDA mixer's matrices and convolutions 39,510,016 + A_log and dt_bias 4,128 + o_norm 128.
    EXPECT_EQ(m.layer(0).ssm_params(), 39514272);
    EXPECT_EQ(m.layer(3).attention_params(), 29114880);
}

}  // namespace
