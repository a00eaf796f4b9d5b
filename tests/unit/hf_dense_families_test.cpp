// The Llama-layout families read from the traits table (src/spec/hf_config_dense.cpp): what each block is made of
// beyond its parameter count (tests/unit/model_params_test.cpp has the counts), which layers attend within a window,
// the dropout each config class keeps on, and what a plain FFN's activation keeps for backward (relu2, xIELU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "memory/activations.hpp"
#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"

namespace ftb {
namespace {

ModelSpec read(const std::string& yaml) {
    Json doc = parse_yaml_text(yaml, "inline");
    return model_from_hf_config(Fields(doc, "inline", "model"), "tiny");
}

std::vector<int64_t> windows(const ModelSpec& m) {
    std::vector<int64_t> w;
    for (const auto& l : m.layers) w.push_back(l.sliding_window);
    return w;
}

const char* kShape =
    "hidden_size: 64, intermediate_size: 128, num_hidden_layers: 4, num_attention_heads: 4, num_key_value_heads: 2,"
    " vocab_size: 1000";

TEST(HfDenseFamilies, Cohere2IsOneLayerNormParallelBlockWithEveryFourthLayerGlobal) {
    const ModelSpec m = read(std::string("{model_type: cohere2, sliding_window: 16, ") + kShape + "}");
    const LayerSpec& l = m.layers[0];
    EXPECT_EQ(m.norm, NormKind::layernorm);
    EXPECT_EQ(l.norms, 1);
    EXPECT_FALSE(l.norm_bias);
    EXPECT_TRUE(l.parallel_attn_mlp);
    EXPECT_EQ(l.ffn_kind, FfnKind::gated);
    EXPECT_TRUE(m.tie_word_embeddings);
    // Cohere2Config: sliding_window_pattern 4 -> layers 0-2 sliding, layer 3 global.
    EXPECT_EQ(windows(m), (std::vector<int64_t>{16, 16, 16, 0}));
    const ModelSpec p = read(std::string("{model_type: cohere2, sliding_window_pattern: 2, ") + kShape + "}");
    EXPECT_EQ(windows(p), (std::vector<int64_t>{4096, 0, 4096, 0}));
    const ModelSpec t = read(std::string("{model_type: cohere2, layer_types: [full_attention, sliding_attention,"
                                         " full_attention, sliding_attention], ") + kShape + "}");
    EXPECT_EQ(windows(t), (std::vector<int64_t>{0, 4096, 0, 4096}));
    const ModelSpec off = read(std::string("{model_type: cohere2, sliding_window: null, ") + kShape + "}");
    EXPECT_EQ(windows(off), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST(HfDenseFamilies, Olmo3NormsFullWidthQkNormAndWindows) {
    const ModelSpec m = read(std::string("{model_type: olmo3, ") + kShape + "}");
    const LayerSpec& l = m.layers[0];
    EXPECT_TRUE(l.qk_norm);
    EXPECT_EQ(l.qk_norm_params, 4 * 16 + 2 * 16);   // q_norm over every head, k_norm over the kv heads
    EXPECT_EQ(l.norms, 2);
    EXPECT_EQ(windows(m), (std::vector<int64_t>{4096, 4096, 4096, 0}));
    // The pattern is fixed at 4 (Olmo3Config.__post_init__); a sliding_window_pattern key is not Olmo 3's.
    const ModelSpec p = read(std::string("{model_type: olmo3, sliding_window_pattern: 2, ") + kShape + "}");
    EXPECT_EQ(windows(p), (std::vector<int64_t>{4096, 4096, 4096, 0}));
}

TEST(HfDenseFamilies, PlainFfnFamiliesAndTheirActivations) {
    const ModelSpec apertus = read(std::string("{model_type: apertus, ") + kShape + "}");
    EXPECT_EQ(apertus.activation, "xielu");
    EXPECT_EQ(apertus.layers[0].ffn_kind, FfnKind::plain);
    EXPECT_EQ(apertus.layers[0].activation_params, 2);
    EXPECT_EQ(apertus.layers[0].qk_norm_params, 2 * 16);
    // Another activation in an Apertus config is a plain ACT2FN function: no learnable scalars.
    EXPECT_EQ(read(std::string("{model_type: apertus, hidden_act: gelu, ") + kShape + "}").layers[0].activation_params, 0);
    const ModelSpec arcee = read(std::string("{model_type: arcee, ") + kShape + "}");
    EXPECT_EQ(arcee.activation, "relu2");
    EXPECT_EQ(arcee.layers[0].ffn_kind, FfnKind::plain);
    const ModelSpec nemotron = read(std::string("{model_type: nemotron, ") + kShape + "}");
    EXPECT_EQ(nemotron.activation, "relu2");
    EXPECT_EQ(nemotron.norm, NormKind::layernorm);
    EXPECT_TRUE(nemotron.layers[0].norm_bias);
    EXPECT_EQ(nemotron.final_norm_params, 2 * 64);
}

TEST(HfDenseFamilies, HeadDimDefaults) {
    // Glm4Config and SeedOssConfig default head_dim to 128; HunYuan and Arcee fall back to hidden / heads.
    EXPECT_EQ(read(std::string("{model_type: glm4, ") + kShape + "}").layers[0].head_dim, 128);
    EXPECT_EQ(read(std::string("{model_type: seed_oss, ") + kShape + "}").layers[0].head_dim, 128);
    EXPECT_EQ(read(std::string("{model_type: hunyuan_v1_dense, ") + kShape + "}").layers[0].head_dim, 16);
    EXPECT_EQ(read(std::string("{model_type: arcee, head_dim: 8, ") + kShape + "}").layers[0].head_dim, 8);
}

TEST(HfDenseFamilies, SeedOssKeepsItsDropoutsOn) {
    // SeedOssConfig: residual_dropout 0.1 (after attention and after the MLP) and attention_dropout 0.1.
    const ModelSpec d = read(std::string("{model_type: seed_oss, ") + kShape + "}");
    EXPECT_DOUBLE_EQ(d.hidden_dropout, 0.1);
    EXPECT_DOUBLE_EQ(d.attention_dropout, 0.1);
    const ModelSpec off = read(std::string("{model_type: seed_oss, residual_dropout: 0, attention_dropout: 0.0, ") +
                               kShape + "}");
    EXPECT_DOUBLE_EQ(off.hidden_dropout, 0);
    EXPECT_DOUBLE_EQ(off.attention_dropout, 0);
    // The other rows keep the config's attention_dropout (0 by default) and no residual dropout.
    const ModelSpec g = read(std::string("{model_type: glm4, ") + kShape + "}");
    EXPECT_DOUBLE_EQ(g.hidden_dropout, 0);
    EXPECT_DOUBLE_EQ(g.attention_dropout, 0);
}

TEST(HfDenseFamilies, ConfigErrorsNameTheField) {
    try {
        read(std::string("{model_type: olmo3, layer_types: [sliding_attention], ") + kShape + "}");
        ADD_FAILURE() << "a layer_types list shorter than the layers was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("layer_types"), std::string::npos) << e.what();
    }
    try {
        read("{model_type: nemotron, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,"
             " num_attention_heads: 4, num_key_value_heads: 3, vocab_size: 1000}");
        ADD_FAILURE() << "3 kv heads for 4 heads were accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("num_key_value_heads"), std::string::npos) << e.what();
    }
}

// A plain FFN's activation, bytes per token kept for backward (FFN 128, bf16), worked out from the ops each runs
// (src/model/activation.cpp): relu2 keeps relu's output, which square reads too: 2 x 128 = 256, as gelu does. xIELU
// keeps x, alpha_p * x, expm1's result and expm1(...) - x (2 bytes each) and the x > 0 mask (1 byte): 9 x 128 = 1,152;
// under torch.amp (fp32 weights) alpha_p * x is fp32: (3 x 2 + 4 + 1) x 128 = 1,408. Compiled, the pointwise chain is
// recomputed from its input, the one tensor kept: 256.
TEST(HfDenseFamilies, PlainFfnActivationKeepsWhatItsBackwardReads) {
    using plan_test::tiny_job;
    auto ffn_bytes = [](const Job& job) {
        const TrainingSetup s = derive_setup(job);
        return layer_activation(job.model.layers[0], job.model, job, s, true, true, 8).per_token.ffn;
    };
    EXPECT_DOUBLE_EQ(ffn_bytes(tiny_job({{"model.model_type", "arcee"}})), 256);
    EXPECT_DOUBLE_EQ(ffn_bytes(tiny_job({{"model.model_type", "gpt_neox"}, {"model.hidden_act", "gelu"}})), 256);
    EXPECT_DOUBLE_EQ(ffn_bytes(tiny_job({{"model.model_type", "apertus"}})), 1152);
    EXPECT_DOUBLE_EQ(ffn_bytes(tiny_job({{"model.model_type", "apertus"}, {"train.weights", "mixed"}})), 1408);
    EXPECT_DOUBLE_EQ(ffn_bytes(tiny_job({{"model.model_type", "apertus"}, {"train.compile", "true"}})), 256);
}

}  // namespace
}  // namespace ftb
