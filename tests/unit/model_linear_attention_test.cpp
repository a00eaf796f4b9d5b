// Linear-attention and short-convolution hybrids (hf_config_linear.cpp): which mixer and FFN each layer gets, the
// refusals naming their field, the mixers' core FLOPs per token by hand, LoRA targets on Gated DeltaNet. Parameter
// totals of tiny configs are in model_params_test.cpp; catalog models in data/models/SOURCES.md.
#include <gtest/gtest.h>

#include <string>

#include "ftbound/error.hpp"
#include "memory/training_setup.hpp"
#include "model/ssm.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "hf_config_test_util.hpp"

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

}  // namespace
