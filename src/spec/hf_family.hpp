// Field readers shared by the family readers (hf_config*.cpp): required and optional shape fields with the
// family's aliases, the checks every family repeats, and the registry each reader file adds its families to.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ftbound/model_spec.hpp"
#include "spec/document.hpp"

namespace ftb::hf {

// Shape fields are required; this reads one, accepting the family's aliases in order.
// Upper bounds on shapes: far beyond any real model, small enough that exact counts cannot overflow int64.
inline constexpr int64_t kMaxDim = int64_t(1) << 24;      // widths, vocabularies
inline constexpr int64_t kMaxLayers = 100000;

inline int64_t need_int(const Fields& f, std::initializer_list<const char*> keys, int64_t min = 1,
                        int64_t max = kMaxDim) {
    for (const char* k : keys)
        if (f.has(k)) return *f.get_int(k, min, max);
    std::string list;
    for (const char* k : keys) list += (list.empty() ? "" : " or ") + std::string(k);
    f.fail(*keys.begin(), std::string("missing (required for the ") + "cost model; give " + list + ")");
}

inline int64_t opt_int(const Fields& f, std::initializer_list<const char*> keys, int64_t dflt, int64_t min = 0,
                       int64_t max = kMaxDim) {
    for (const char* k : keys)
        if (f.has(k)) return *f.get_int(k, min, max);
    return dflt;
}

inline bool opt_bool(const Fields& f, const char* key, bool dflt) { return f.get_bool(key).value_or(dflt); }

inline void check_divisible(const Fields& f, const char* key, int64_t hidden, int64_t heads) {
    if (hidden % heads != 0)
        f.fail(key, "hidden size " + std::to_string(hidden) + " is not divisible by " + std::to_string(heads) +
                        " heads; give head_dim");
}

inline LayerSpec base_layer(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim, int64_t ffn) {
    LayerSpec l;
    l.hidden = hidden;
    l.heads = heads;
    l.kv_heads = kv_heads;
    l.head_dim = head_dim;
    l.ffn_intermediate = ffn;
    return l;
}

inline void check_kv(const Fields& f, const char* key, int64_t heads, int64_t kv) {
    if (kv > heads || heads % kv != 0)
        f.fail(key, std::to_string(kv) + " key/value heads do not divide " + std::to_string(heads) + " attention heads");
}

// The layer indices listed in a config field (qwen2_moe / qwen3_moe mlp_only_layers).
inline std::vector<int64_t> layer_list(const Fields& f, const char* key) {
    std::vector<int64_t> out;
    if (!f.has(key)) return out;
    const Json& arr = *f.raw(key);
    if (!arr.is_array()) f.fail(key, "expected a list of layer indices");
    for (const auto& v : arr) {
        if (!v.is_number_integer()) f.fail(key, "expected a list of layer indices");
        out.push_back(v.get<int64_t>());
    }
    return out;
}

// A family: its config.json model_type and the reader that turns such a config into a ModelSpec. Readers refuse
// what they cannot cost with an InputError naming the field.
struct FamilyReader {
    const char* model_type;
    ModelSpec (*read)(const Fields&);
};

// The entries of `layer_types` (one per layer), or none when the config leaves it out.
std::vector<std::string> layer_types(const Fields& f, int64_t layers);

// The checkpoint's weight format from `quantization_config` (hf_quantization.cpp): AWQ, GPTQ, ModelOpt NVFP4, or
// none; formats it cannot cost are refused naming the field.
QuantizedWeights read_quantization_config(const Fields& f);

// The families of each reader file, in the order the contract lists them.
const std::vector<FamilyReader>& core_families();   // hf_config.cpp
const std::vector<FamilyReader>& dense_families();  // hf_config_dense.cpp: Llama-layout variants by traits
const std::vector<FamilyReader>& moe_families();    // hf_config_moe.cpp
const std::vector<FamilyReader>& vlm_families();    // hf_config_vlm.cpp: vision-language checkpoints
const std::vector<FamilyReader>& hybrid_families(); // hf_config_hybrid.cpp: state-space and hybrid models
const std::vector<FamilyReader>& gemma4_families(); // hf_config_gemma4.cpp: Gemma 4 and Gemma 4 unified
const std::vector<FamilyReader>& linear_families(); // hf_config_linear.cpp: linear-attention / short-conv hybrids

// Qwen3-VL's vision tower and mergers from a vision_config (hf_config_vlm.cpp; Qwen3.5 reuses it without deepstack).
EncoderSpec qwen3_vl_vision_tower(const Fields& v);

// mistral4's MLA + MoE text model (hf_config_moe.cpp), as Mistral Small 4's mistral3 checkpoint nests it.
ModelSpec mistral4_text(const Fields& f);
// DeepseekV3Attention's multi-head latent attention from num_attention_heads, q_lora_rank, kv_lora_rank,
// qk_nope_head_dim, qk_rope_head_dim, v_head_dim (hf_config_moe.cpp; Kimi Linear's MLA layers reuse it), with a dense
// gated FFN of intermediate_size.
LayerSpec mla_attention_layer(const Fields& f, int64_t hidden);

// A mamba_ssm checkpoint's config.json (MambaLMHeadModel: d_model, n_layer, ssm_cfg; no model_type).
ModelSpec mamba_ssm_checkpoint(const Fields& f);

// The Llama layout and its variations by model_type (llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma,
// gemma2, gemma3_text, phi3): the text model of composite checkpoints (hf_config.cpp read_llama_like).
ModelSpec llama_like(const Fields& f, const std::string& type);

}  // namespace ftb::hf
