// Vision-language checkpoints through a plan: the tower and projector count as frozen or trainable weights as
// train.encoder says, the plan's notes say the encoder's compute is not in the step, and the importers carry what
// their configs freeze (LLaMA-Factory's freeze_vision_tower / freeze_multi_modal_projector) or refuse what a plan
// cannot express (torchtune's Llama 3.2 Vision trainable parts).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "ftbound/error.hpp"
#include "ftbound/memory.hpp"
#include "ops/accuracy_notes.hpp"
#include "plan_test_util.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "spec_test_util.hpp"

namespace ftb {
namespace {

using namespace plan_test;

// The tiny llava of model_params_test.cpp: the tiny llama text model (202,048 parameters), a CLIP tower of 2,576
// and a projector of 5,248 (linear_1 [16 -> 64] + 64, linear_2 [64 -> 64] + 64).
constexpr double kTowerParams = 2576;
constexpr double kProjectorParams = 5248;

Job tiny_llava_job(const std::vector<std::pair<std::string, std::string>>& sets) {
    Json doc = tiny_job_document();
    doc["model"] = Json::parse(R"({
      "model_type": "llava", "tie_word_embeddings": false, "vision_feature_layer": -2,
      "text_config": {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000},
      "vision_config": {"model_type": "clip_vision_model", "hidden_size": 16, "intermediate_size": 32,
                        "num_hidden_layers": 1, "num_attention_heads": 2, "image_size": 4, "patch_size": 2}})");
    for (const auto& [key, value] : sets) apply_override(doc, key + "=" + value, "tiny.yaml");
    return job_from_document(doc, "tiny.yaml");
}

TEST(VisionLanguage, EncoderSettingDecidesWhatOfTheTowerTrains) {
    const double trained = plan_memory(tiny_llava_job({})).trainable_params;
    const double projector = plan_memory(tiny_llava_job({{"train.encoder", "projector"}})).trainable_params;
    const double frozen = plan_memory(tiny_llava_job({{"train.encoder", "frozen"}})).trainable_params;
    EXPECT_DOUBLE_EQ(trained, kTinyParams + kTowerParams + kProjectorParams);
    EXPECT_DOUBLE_EQ(projector, kTinyParams + kProjectorParams);
    EXPECT_DOUBLE_EQ(frozen, kTinyParams);
    // The frozen tower is still held: the weights grow by the tower and projector either way.
    const MemoryResult text_only = plan_memory(tiny_job());
    const MemoryResult with_frozen_tower = plan_memory(tiny_llava_job({{"train.encoder", "frozen"}}));
    EXPECT_DOUBLE_EQ(with_frozen_tower.breakdown.weights_bytes - text_only.breakdown.weights_bytes,
                     2 * (kTowerParams + kProjectorParams));   // pure bf16 weights
}

TEST(VisionLanguage, LoraKeepsTheTowerFrozen) {
    const MemoryResult m = plan_memory(tiny_llava_job({{"train.method", "lora"}, {"train.lora.rank", "8"}}));
    const MemoryResult text = plan_memory(tiny_job({{"train.method", "lora"}, {"train.lora.rank", "8"}}));
    EXPECT_DOUBLE_EQ(m.trainable_params, text.trainable_params);
}

TEST(VisionLanguage, NotesSayTheEncoderComputeIsNotPlanned) {
    const auto notes = accuracy_notes(tiny_llava_job({{"train.encoder", "projector"}}));
    const auto note = std::find_if(notes.begin(), notes.end(),
                                   [](const std::string& n) { return n.rfind("vision encoder", 0) == 0; });
    ASSERT_NE(note, notes.end());
    EXPECT_NE(note->find("clip_vision_model"), std::string::npos) << *note;
    EXPECT_NE(note->find("projector trains"), std::string::npos) << *note;
    EXPECT_NE(note->find("not in the step time"), std::string::npos) << *note;
    for (const auto& n : accuracy_notes(tiny_job())) EXPECT_EQ(n.find("encoder"), std::string::npos) << n;
}

TEST(VisionLanguage, EncoderSettingIsChecked) {
    try {
        tiny_llava_job({{"train.encoder", "half"}});
        FAIL() << "accepted train.encoder: half";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "train.encoder");
    }
}

// The smolvlm, internvl, glm4v and voxtral readers (their hand counts are in model_params_test.cpp): a field they
// cannot cost is an error naming it; voxtral's encoder is an audio encoder.
ModelSpec read_model(const std::string& json) {
    const Json doc = Json::parse(json);
    return model_from_hf_config(Fields(doc, "config.json", ""), "tiny");
}

std::string error_of(const std::string& json) {
    try {
        read_model(json);
    } catch (const InputError& e) {
        return e.field() + ": " + e.what();
    }
    return "accepted";
}

constexpr const char* kTinyText = R"("model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 1000)";

TEST(VisionLanguage, NewReadersNameWhatTheyRefuse) {
    const std::string text = std::string(R"("text_config": {)") + kTinyText + "}";
    const std::string smol_vision = R"("vision_config": {"hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 1, "image_size": 4, "patch_size": 2})";
    EXPECT_NE(error_of("{\"model_type\": \"smolvlm\", " + text + ", " + smol_vision + "}").find("scale_factor"),
              std::string::npos);
    const std::string bad_size = R"({"model_type": "internvl", "text_config": {"model_type": "qwen3", "hidden_size": 64,
        "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000},
        "vision_config": {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "image_size": [4]}})";
    const std::string e = error_of(bad_size);
    EXPECT_NE(e.find("image_size"), std::string::npos) << e;
    EXPECT_NE(e.find("[height, width]"), std::string::npos) << e;
    EXPECT_NE(error_of(R"({"model_type": "internvl", "text_config": {"model_type": "gemma"}, "vision_config": {}})")
                  .find("text model 'gemma' is not one the internvl reader takes"),
              std::string::npos);
    const std::string glm = R"({"model_type": "glm4v", "text_config": {"hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000},
        "vision_config": {"hidden_size": 16, "out_hidden_size": 24, "intermediate_size": 40, "image_size": 4,
        "patch_size": 2}})";
    EXPECT_NE(error_of(glm).find("depth"), std::string::npos) << error_of(glm);
    EXPECT_NE(error_of(R"({"model_type": "voxtral", "text_config": {"model_type": "mistral"}, "audio_config": {}})")
                  .find("text model 'mistral' of a voxtral checkpoint"),
              std::string::npos);
    EXPECT_NE(error_of("{\"model_type\": \"voxtral\", " + text + "}").find("audio_config"), std::string::npos);
}

TEST(VisionLanguage, VoxtralEncoderIsAnAudioEncoder) {
    const ModelSpec m = read_model(std::string(R"({"model_type": "voxtral", "text_config": {)") + kTinyText +
                                   R"(}, "audio_config": {"hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 1, "num_mel_bins": 4, "max_source_positions": 6}})");
    EXPECT_EQ(m.encoder.modality, "audio");
    EXPECT_EQ(m.encoder.kind, "voxtral_encoder");
    EXPECT_EQ(m.encoder.params, 3328);           // conv1 208 + conv2 784 + positions 96 + block 2,208 + LayerNorm 32
    EXPECT_EQ(m.encoder.projector_params, 6144);   // [32 -> 64] + [64 -> 64], no biases
    EXPECT_EQ(m.vision_params, 3328 + 6144);
}

// PaddleOCR-VL (hand count in model_params_test.cpp): the text fields at the top level as the hub config has them,
// a SigLIP tower without its pooling head, the projector over 2 x 2 merged patches; use_bias puts a bias on every
// text linear.
constexpr const char* kPaddleText = R"({"model_type": "paddleocr_vl", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 1000)";

TEST(VisionLanguage, PaddleOcrVlTextAtTheTopLevel) {
    const std::string text = std::string(kPaddleText) + R"(, "tie_word_embeddings": false)";
    const std::string vision = R"(, "vision_config": {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
        "num_attention_heads": 2, "image_size": 28, "patch_size": 14, "spatial_merge_size": 2})";
    const ModelSpec m = read_model(text + vision + "}");
    EXPECT_EQ(m.encoder.kind, "paddleocr_vl");
    EXPECT_EQ(m.encoder.params, 11744);            // patch conv 9,424 + positions 64 + block 2,224 + post norm 32
    EXPECT_EQ(m.encoder.projector_params, 8352);   // pre_norm 32 + [64 -> 64] + 64 + [64 -> 64] + 64
    EXPECT_FALSE(m.tie_word_embeddings);
    EXPECT_EQ(m.total_params(), 202048 + 11744 + 8352);
    // use_bias: q 64 + k 32 + v 32 + o 64, gate and up 2 x 128, down 64 per block.
    const ModelSpec biased = read_model(text + R"(, "use_bias": true)" + vision + "}");
    EXPECT_EQ(biased.layer(0).params() - m.layer(0).params(), 64 + 32 + 32 + 64 + 2 * 128 + 64);
    // PaddleOCRVLConfig ties by default; a vision_config left out takes PaddleOCRVisionConfig's defaults.
    EXPECT_TRUE(read_model(std::string(kPaddleText) + "}").tie_word_embeddings);
    // 384 // 14 = 27 rows of positions a side, as SiglipVisionEmbeddings floors it; a patch of 0 is an error.
    EXPECT_EQ(read_model(text + R"(, "vision_config": {"hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 1, "image_size": 30, "patch_size": 14}})").encoder.params, 11744);
    EXPECT_NE(error_of(text + R"(, "vision_config": {"patch_size": 0}})").find("patch_size"), std::string::npos);
}

// Gemma 4 (hand counts in model_params_test.cpp): the on-device checkpoints' per-layer embeddings, KV-shared layers and
// conformer audio tower are refused naming the field, Gemma 3n naming its model_type; the unified checkpoint's
// embedders are its encoder (no blocks) and a k_eq_v full-attention layer is held as 2 x heads of global_head_dim / 2.
constexpr const char* kGemma4Text = R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 32, "vocab_size": 1000)";

TEST(VisionLanguage, Gemma4RefusesWhatItCannotPlan) {
    const std::string text = std::string("{\"model_type\": \"gemma4_text\", ") + kGemma4Text;
    EXPECT_EQ(error_of(text + ", \"hidden_size_per_layer_input\": 0}"), "accepted");
    const std::string ple = error_of(text + ", \"hidden_size_per_layer_input\": 256}");
    EXPECT_EQ(ple.rfind("hidden_size_per_layer_input: ", 0), 0u) << ple;
    EXPECT_NE(ple.find("per-layer embeddings"), std::string::npos) << ple;
    EXPECT_EQ(error_of(text + ", \"hidden_size_per_layer_input\": null}"), "accepted");
    EXPECT_EQ(error_of(text + "}").rfind("hidden_size_per_layer_input: ", 0), 0u) << error_of(text + "}");
    const std::string shared = error_of(text + ", \"hidden_size_per_layer_input\": 0, \"num_kv_shared_layers\": 1}");
    EXPECT_EQ(shared.rfind("num_kv_shared_layers: ", 0), 0u) << shared;
    const std::string audio = error_of(std::string(R"({"model_type": "gemma4", "audio_config": {}, "text_config": {)") +
                                       kGemma4Text + R"(, "hidden_size_per_layer_input": 0}})");
    EXPECT_EQ(audio.rfind("audio_config: ", 0), 0u) << audio;
    for (const char* type : {"gemma3n", "gemma3n_text"}) {
        const std::string e = error_of(std::string("{\"model_type\": \"") + type + "\"}");
        EXPECT_EQ(e.rfind("model_type: ", 0), 0u) << e;
        EXPECT_NE(e.find("Gemma 3n"), std::string::npos) << e;
        EXPECT_NE(e.find("AltUp"), std::string::npos) << e;
    }
}

TEST(VisionLanguage, Gemma4UnifiedEmbeddersAreTheEncoder) {
    const ModelSpec m = read_model(std::string(R"({"model_type": "gemma4_unified", "text_config": {)") + kGemma4Text +
                                   R"(, "num_global_key_value_heads": 1, "attention_k_eq_v": true},
        "vision_config": {"patch_size": 2, "pooling_kernel_size": 2, "mm_embed_dim": 64, "mm_posemb_size": 10,
        "output_proj_dims": 64}, "audio_config": {"audio_embed_dim": 8}})");
    EXPECT_EQ(m.encoder.modality, "vision");
    EXPECT_EQ(m.encoder.kind, "gemma4_unified_embedder");
    EXPECT_EQ(m.encoder.layers, 0);
    EXPECT_EQ(m.encoder.params, 4768);             // LayerNorm 96 + Dense 3,136 + LayerNorm 128 + positions 1,280 + LN 128
    EXPECT_EQ(m.encoder.projector_params, 4608);   // vision [64 -> 64] + audio [8 -> 64]
    ASSERT_EQ(m.layers.size(), 2u);                // no layer_types: layer 0 sliding, the last forced full
    EXPECT_EQ(m.layers[0].sliding_window, 1024);   // Gemma4UnifiedTextConfig's default window
    EXPECT_EQ(m.layers[0].head_dim, 16);
    EXPECT_EQ(m.layers[1].sliding_window, 0);
    EXPECT_EQ(m.layers[1].heads, 8);               // q [64 -> 4 x 32] held as 8 heads of 16
    EXPECT_EQ(m.layers[1].head_dim, 16);
    EXPECT_EQ(m.layers[1].kv_heads, 1);            // k [64 -> 32] held as k + v of 16 each
    EXPECT_EQ(m.layers[1].qk_norm_params, 64);     // q_norm and k_norm over global_head_dim 32
}

// The plan's note about an audio encoder speaks of audio clips, not images.
TEST(VisionLanguage, AudioEncoderNoteSpeaksOfAudio) {
    Json doc = tiny_job_document();
    doc["model"] = Json::parse(std::string(R"({"model_type": "voxtral", "text_config": {)") + kTinyText +
                               R"(}, "audio_config": {"hidden_size": 16, "intermediate_size": 32,
        "num_hidden_layers": 1, "num_mel_bins": 4, "max_source_positions": 6}})");
    const auto notes = accuracy_notes(job_from_document(doc, "tiny.yaml"));
    const auto note = std::find_if(notes.begin(), notes.end(), [](const std::string& n) { return n.find("audio encoder") == 0; });
    ASSERT_NE(note, notes.end());
    EXPECT_NE(note->find("per audio clip"), std::string::npos) << *note;
    EXPECT_EQ(note->find("image"), std::string::npos) << *note;
}

std::string write_config(const std::string& name, const std::string& text) {
    return spec_test::write_scratch(name, text);
}

TEST(VisionLanguage, LlamaFactoryFreezesReachTheJob) {
    const std::string base = "model_name_or_path: Qwen/Qwen2.5-VL-7B-Instruct\nstage: sft\nfinetuning_type: full\n"
                             "cutoff_len: 1024\nper_device_train_batch_size: 1\nbf16: true\n";
    auto encoder_of = [](const std::string& path) {
        const auto r = spec_test::run_ftbound({"import", path, "--json"});
        EXPECT_EQ(r.exit_code, 0) << spec_test::describe(r);
        return r.exit_code == 0 ? Json::parse(r.out)["train"].value("encoder", std::string("(unset)")) : std::string();
    };
    EXPECT_EQ(encoder_of(write_config("lf_vl_defaults.yaml", base)), "frozen");   // LLaMA-Factory's defaults
    EXPECT_EQ(encoder_of(write_config("lf_vl_proj.yaml", base + "freeze_multi_modal_projector: false\n")), "projector");
    EXPECT_EQ(encoder_of(write_config("lf_vl_all.yaml", base + "freeze_vision_tower: false\n"
                                                               "freeze_multi_modal_projector: false\n")),
              "trained");
    // A text-only model gets no encoder setting.
    EXPECT_EQ(encoder_of(write_config("lf_text.yaml", "model_name_or_path: Qwen/Qwen2.5-7B\nfinetuning_type: full\n")),
              "(unset)");
    const auto r = spec_test::run_ftbound(
        {"import", write_config("lf_vl_lang.yaml", base + "freeze_language_model: true\n"), "--json"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("freeze_language_model"), std::string::npos) << r.err;
}

// The tiny mllama of model_params_test.cpp (hand counts there): text blocks 36,992 (self-attention, block 0) and
// 37,024 (cross-attention at [1]: + q_norm/k_norm 32); embedding 64,000 + extra 514 (8 image-token rows 8*64 and
// two gates); head 64,000; norm 64. Tower 5,349 (2 blocks of hidden 16, fc 32); projector 2,112.
Job tiny_mllama_job(const std::vector<std::pair<std::string, std::string>>& sets) {
    Json doc = tiny_job_document();
    doc["model"] = Json::parse(R"({
      "model_type": "mllama",
      "text_config": {"model_type": "mllama_text_model", "hidden_size": 64, "intermediate_size": 128,
                      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
                      "cross_attention_layers": [1]},
      "vision_config": {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_global_layers": 1,
                        "attention_heads": 2, "image_size": 4, "patch_size": 2, "max_num_tiles": 2,
                        "vision_output_dim": 32, "supported_aspect_ratios": [[1, 1], [1, 2]]}})");
    for (const auto& [key, value] : sets) apply_override(doc, key + "=" + value, "tiny.yaml");
    return job_from_document(doc, "tiny.yaml");
}

TEST(VisionLanguage, CrossAttentionBlocksTrainAloneUnderFull) {
    // torchtune llama3_2_vision_11b(decoder_trainable=False): fusion = the cross-attention block 37,024 + the 514
    // extra (image-token rows, gates) + projection head; encoder = the tower: 37,024 + 514 + 5,349 + 2,112 = 44,999.
    const MemoryResult m = plan_memory(tiny_mllama_job({{"train.blocks", "cross_attention"}}));
    EXPECT_DOUBLE_EQ(m.trainable_params, 44999);
    EXPECT_DOUBLE_EQ(m.total_params, 210055);
    // Every block trained: the whole model.
    EXPECT_DOUBLE_EQ(plan_memory(tiny_mllama_job({})).trainable_params, 210055);
}

TEST(VisionLanguage, AdaptersOnCrossAttentionBlocksAndTower) {
    // LoRA rank 2 on q_proj, v_proj: the cross-attention block's q r*(64+64) = 256 and v r*(64+32) = 192 -> 448; the
    // tower's 2 blocks q and v r*(16+16) = 64 each -> 256. Total 704. With every text block: 2*448 + 256 = 1,152.
    const std::vector<std::pair<std::string, std::string>> lora = {
        {"train.method", "lora"}, {"train.lora.rank", "2"}, {"train.lora.targets", "[q_proj, v_proj]"},
        {"train.encoder", "adapters"}};
    auto with = [&](std::vector<std::pair<std::string, std::string>> more) {
        more.insert(more.begin(), lora.begin(), lora.end());   // later settings override the defaults here
        return plan_memory(tiny_mllama_job(more)).trainable_params;
    };
    EXPECT_DOUBLE_EQ(with({{"train.blocks", "cross_attention"}}), 704);
    EXPECT_DOUBLE_EQ(with({}), 1152);
    // The MLP's names reach the tower's fc1 (up_proj) and fc2 (down_proj): the cross-attention block's up and down
    // r*(64+128) each, the tower's fc1 and fc2 r*(16+32) each in both blocks: 384 + 384 + 2*(96 + 96) = 1,152.
    EXPECT_DOUBLE_EQ(with({{"train.blocks", "cross_attention"}, {"train.lora.targets", "[up_proj, down_proj]"}}),
                     2 * (64 + 128) + 2 * (128 + 64) + 2 * (2 * (16 + 32) + 2 * (32 + 16)));
}

TEST(VisionLanguage, TorchtuneQloraKeepsUnadaptedAttentionUnquantised) {
    // torchtune builds a block without adapters from plain nn.Linear attention and a FrozenNF4Linear MLP: with only
    // the cross-attention block adapted, block 0's attention (12,288) is bf16 instead of NF4, and block 0 carries no
    // adapters (448 bf16 parameters fewer). torchao NF4: 0.5 + 1/64 + 2/(64*256) bytes per weight.
    const std::vector<std::pair<std::string, std::string>> qlora = {
        {"train.method", "qlora"}, {"train.lora.rank", "2"}, {"train.lora.targets", "[q_proj, v_proj]"},
        {"train.framework", "torchtune"}, {"train.weights", "pure"}, {"train.encoder", "adapters"}};
    auto weights = [&](std::vector<std::pair<std::string, std::string>> more) {
        more.insert(more.begin(), qlora.begin(), qlora.end());
        return plan_memory(tiny_mllama_job(more)).breakdown.weights_bytes;
    };
    const double nf4 = 0.5 + 1.0 / 64 + 2.0 / (64 * 256);
    EXPECT_NEAR(weights({{"train.blocks", "cross_attention"}}) - weights({}), 12288 * (2 - nf4) - 448 * 2, 1e-6);
}

TEST(VisionLanguage, TrainedPartsAreChecked) {
    auto field_of = [](const std::function<void()>& f) {
        try {
            f();
        } catch (const InputError& e) {
            return e.field() + ": " + e.what();
        }
        return std::string("accepted");
    };
    // A model without cross-attention blocks, the tower adapters without LoRA, and a tower whose layout is unknown.
    EXPECT_NE(field_of([] { tiny_llava_job({{"train.blocks", "cross_attention"}}); }).find("train.blocks"), std::string::npos);
    EXPECT_NE(field_of([] { tiny_mllama_job({{"train.encoder", "adapters"}}); }).find("needs method lora or qlora"),
              std::string::npos);
    EXPECT_NE(field_of([] { tiny_llava_job({{"train.method", "lora"}, {"train.encoder", "adapters"}}); })
                  .find("block layout"),
              std::string::npos);
    EXPECT_NE(field_of([] {
                  tiny_mllama_job({{"train.method", "lora"}, {"train.blocks", "cross_attention"},
                                   {"train.lora.targets", "[q_proj, lm_head]"}});
              }).find("train.lora.targets"),
              std::string::npos);
}

TEST(VisionLanguage, TorchtuneVisionPartsMapToBlocksAndEncoder) {
    const std::string recipe = "model:\n  _component_: torchtune.models.llama3_2_vision.llama3_2_vision_11b\n"
                               "  decoder_trainable: True\n  encoder_trainable: True\n  fusion_trainable: True\n"
                               "checkpointer:\n  checkpoint_dir: /tmp/Llama-3.2-11B-Vision-Instruct/\n"
                               "tokenizer:\n  max_seq_len: 2048\nbatch_size: 1\ndtype: bf16\n";
    const auto all = spec_test::run_ftbound({"import", write_config("tt_vision_all.yaml", recipe), "--json"});
    ASSERT_EQ(all.exit_code, 0) << spec_test::describe(all);
    EXPECT_EQ(Json::parse(all.out)["train"]["method"], "full");
    EXPECT_EQ(Json::parse(all.out)["train"]["blocks"], "all");
    // The builder's own defaults (decoder False): only the cross-attention blocks of the text model train.
    std::string defaults = recipe;
    defaults.replace(defaults.find("  decoder_trainable: True\n"), 26, "");
    const auto split = spec_test::run_ftbound({"import", write_config("tt_vision_default.yaml", defaults), "--json"});
    ASSERT_EQ(split.exit_code, 0) << spec_test::describe(split);
    EXPECT_EQ(Json::parse(split.out)["train"]["blocks"], "cross_attention");
    EXPECT_EQ(Json::parse(split.out)["train"]["encoder"], "trained");
    // CLIP frozen under a trained projection head: a split ftbound's tower does not have, named by its field.
    std::string encoder_frozen = recipe;
    encoder_frozen.replace(encoder_frozen.find("encoder_trainable: True"), 23, "encoder_trainable: False");
    const auto refused = spec_test::run_ftbound({"import", write_config("tt_vision_enc.yaml", encoder_frozen), "--json"});
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("model.encoder_trainable: decoder trained, encoder frozen, fusion trained"),
              std::string::npos)
        << refused.err;
}

}  // namespace
}  // namespace ftb
