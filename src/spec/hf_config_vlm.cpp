// Vision-language checkpoints: the text model from text_config through the llama-like reader (its blocks are the
// ModelSpec's layers), plus the vision tower and the projector into the text model, counted exactly in
// ModelSpec::encoder. Module layouts follow transformers' modeling_<family>.py; defaults its configuration_<family>.py.
// Shape fields whose class defaults are not a released checkpoint's are required (need_int), so a config that leaves
// one out gets an error naming it rather than a guessed count.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/hf_family.hpp"

namespace ftb::hf {
namespace {

// One encoder block: attention (q, k, v, o; a fused qkv has the same count), the MLP and two norms.
struct TowerBlock {
    int64_t hidden = 0;
    int64_t ffn = 0;
    bool attn_bias = false;   // biases on q, k, v and o
    bool mlp_bias = false;
    bool gated = false;       // gate, up, down (SwiGLU) instead of fc1, fc2
    bool norm_bias = false;   // LayerNorm with bias; otherwise RMSNorm (weight only)
    int64_t params() const {
        const int64_t h = hidden;
        int64_t p = 4 * h * h + (attn_bias ? 4 * h : 0);
        p += (gated ? 3 : 2) * h * ffn;
        if (mlp_bias) p += (gated ? 2 * ffn : ffn) + h;
        return p + 2 * h * (norm_bias ? 2 : 1);
    }
};

int64_t linear(int64_t in, int64_t out, bool bias) { return in * out + (bias ? out : 0); }

EncoderSpec vision(const char* kind, int64_t params, int64_t projector, int64_t layers, int64_t hidden) {
    EncoderSpec e;
    e.modality = "vision";
    e.kind = kind;
    e.params = params;
    e.projector_params = projector;
    e.layers = layers;
    e.hidden = hidden;
    return e;
}

void attach(ModelSpec& m, const EncoderSpec& e) {
    m.encoder = e;
    m.vision_params = e.params + e.projector_params;
}

// A copy of a nested config with its config class's defaults filled in where the published file leaves them out
// (LlavaConfig builds text_config through CONFIG_MAPPING[model_type](**text_config), so missing keys take that class's
// defaults).
Json with_defaults(const Json& node, std::initializer_list<std::pair<const char*, int64_t>> defaults) {
    Json out = node;
    for (const auto& [key, value] : defaults)
        if (!out.contains(key) || out[key].is_null()) out[key] = value;
    return out;
}

// The text model of a composite config: text_config, or the top level where the family once kept its text fields
// there (Qwen2-VL's config.json as first published). The composite's tie_word_embeddings wins: the
// *ForConditionalGeneration class ties (or not) from the top-level config.
ModelSpec text_model(const Fields& f, const Fields& text, const std::string& family) {
    ModelSpec m = llama_like(text, family);
    if (f.has("tie_word_embeddings")) m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    return m;
}

// CLIPVisionModel (transformers clip/modeling_clip.py CLIPVisionEmbeddings, CLIPVisionTransformer): class embedding,
// Conv2d patch embedding without bias, learned positions ((image/patch)^2 + 1), pre_layrnorm, blocks (q/k/v/out_proj and
// fc1/fc2 with biases, two LayerNorms), post_layernorm.
std::pair<int64_t, int64_t> clip_tower(const Fields& v) {
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t layers = need_int(v, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t image = need_int(v, {"image_size"});
    const int64_t patch = need_int(v, {"patch_size"});
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);   // CLIPVisionConfig num_channels=3
    if (image % patch != 0) v.fail("patch_size", "does not divide image_size " + std::to_string(image));
    const TowerBlock b{h, need_int(v, {"intermediate_size"}), true, true, false, true};
    const int64_t positions = (image / patch) * (image / patch) + 1;
    return {h + channels * patch * patch * h + positions * h + 2 * h + layers * b.params() + 2 * h, layers};
}

// PixtralVisionModel (transformers pixtral/modeling_pixtral.py): Conv2d patch_conv without bias, ln_pre (RMSNorm),
// blocks of q/k/v/o and gate/up/down without biases and two RMSNorms; 2-D rotary positions (no table). Defaults:
// PixtralVisionConfig (pixtral/configuration_pixtral.py: hidden_size 1024, intermediate_size 4096, num_hidden_layers
// 24, num_channels 3, patch_size 16), which published Pixtral configs rely on.
std::pair<int64_t, int64_t> pixtral_tower(const Fields& v) {
    const int64_t h = opt_int(v, {"hidden_size"}, 1024, 1);
    const int64_t layers = opt_int(v, {"num_hidden_layers"}, 24, 1, kMaxLayers);
    const int64_t patch = opt_int(v, {"patch_size"}, 16, 1);
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    const TowerBlock b{h, opt_int(v, {"intermediate_size"}, 4096, 1), false, false, true, false};
    return {channels * patch * patch * h + h + layers * b.params(), layers};
}

int64_t vision_hidden(const Fields& v) {
    const bool pixtral = v.get_string("model_type").value_or("") == "pixtral";
    return pixtral ? opt_int(v, {"hidden_size"}, 1024, 1) : need_int(v, {"hidden_size"});
}

// The vision tower a llava-style config names in vision_config.model_type.
std::pair<int64_t, int64_t> llava_tower(const Fields& v) {
    const std::string type = v.get_string("model_type").value_or("clip_vision_model");   // LlavaConfig's default
    if (type == "clip_vision_model") return clip_tower(v);
    if (type == "pixtral") return pixtral_tower(v);
    v.fail("model_type", "vision tower '" + type + "' is not one ftbound counts (clip_vision_model, pixtral)");
}

// vision_feature_layer: one layer index, or a list whose features are concatenated (LlavaMultiModalProjector's input
// width is vision hidden x the number of layers).
int64_t feature_layers(const Fields& f) {
    const Json* layer = f.raw("vision_feature_layer");
    if (layer && layer->is_array()) return std::max<int64_t>(1, static_cast<int64_t>(layer->size()));
    return 1;
}

// The text config of a llava-style checkpoint, with the defaults of the class its model_type names.
ModelSpec llava_text(const Fields& f, Json& holder) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    const Fields t = f.child("text_config");
    const std::string type = t.get_string("model_type").value_or("llama");   // LlavaConfig's default text model
    if (type == "llama")   // LlamaConfig.__init__ defaults (transformers llama/configuration_llama.py)
        holder = with_defaults(t.node(), {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 11008},
                                          {"num_hidden_layers", 32}, {"num_attention_heads", 32}});
    else if (type == "mistral")   // MistralConfig.__init__ defaults (transformers mistral/configuration_mistral.py)
        holder = with_defaults(t.node(), {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                                          {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                                          {"num_key_value_heads", 8}});
    else if (type == "ministral3")   // Ministral3Config defaults (transformers ministral3/configuration_ministral3.py)
        holder = with_defaults(t.node(), {{"vocab_size", 131072}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                                          {"num_hidden_layers", 34}, {"num_attention_heads", 32},
                                          {"num_key_value_heads", 8}, {"head_dim", 128},
                                          {"max_position_embeddings", 262144}});
    else
        t.fail("model_type",
               "text model '" + type + "' of a llava checkpoint is not one ftbound reads (llama, mistral, ministral3)");
    // Ministral 3 is Mistral's modules (modular_ministral3.py, transformers 00b364c7: Ministral3Attention,
    // DecoderLayer, Model and ForCausalLM subclass the Mistral ones; only a parameter-free query scale differs).
    return text_model(f, Fields(holder, t.file(), t.path()), type == "ministral3" ? "mistral" : type);
}

// llava (LlavaForConditionalGeneration, transformers llava/modeling_llava.py): the vision tower, and
// LlavaMultiModalProjector: linear_1 [vision hidden x feature layers -> text hidden], act, linear_2 [text -> text],
// both with bias unless multimodal_projector_bias is false (LlavaConfig default true).
ModelSpec read_llava(const Fields& f) {
    Json holder;
    ModelSpec m = llava_text(f, holder);
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields v = f.child("vision_config");
    const auto [tower, layers] = llava_tower(v);
    const int64_t vh = vision_hidden(v);
    const bool bias = opt_bool(f, "multimodal_projector_bias", true);
    const int64_t projector = linear(vh * feature_layers(f), m.hidden, bias) + linear(m.hidden, m.hidden, bias);
    attach(m, vision(v.get_string("model_type").value_or("clip_vision_model").c_str(), tower, projector, layers, vh));
    return m;
}

// Mistral Small 4 nests a mistral4 text model (MLA + MoE; transformers mistral4/convert_mistral4_weight_to_hf.py
// builds Mistral3Config(text_config=Mistral4Config)); the others a llava-style dense one.
ModelSpec mistral3_text(const Fields& f, Json& holder) {
    if (!f.has("text_config") || f.child("text_config").get_string("model_type").value_or("") != "mistral4")
        return llava_text(f, holder);
    ModelSpec m = mistral4_text(f.child("text_config"));
    if (f.has("tie_word_embeddings")) m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    return m;
}

// mistral3 (Mistral3ForConditionalGeneration, transformers mistral3/modeling_mistral3.py): the Pixtral tower, and
// Mistral3MultiModalProjector: norm (RMSNorm, vision hidden), patch_merger.merging_layer [vision hidden x merge^2 ->
// vision hidden] without bias, linear_1 [vision hidden x feature layers -> text hidden], linear_2 [text -> text], both
// with bias only when multimodal_projector_bias (Mistral3Config default false); spatial_merge_size default 2.
ModelSpec read_mistral3(const Fields& f) {
    Json holder;
    ModelSpec m = mistral3_text(f, holder);
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields v = f.child("vision_config");
    const auto [tower, layers] = pixtral_tower(v);
    const int64_t vh = opt_int(v, {"hidden_size"}, 1024, 1);
    const int64_t merge = opt_int(f, {"spatial_merge_size"}, 2, 1, 64);
    const bool bias = opt_bool(f, "multimodal_projector_bias", false);
    const int64_t projector = vh + vh * merge * merge * vh + linear(vh * feature_layers(f), m.hidden, bias) +
                              linear(m.hidden, m.hidden, bias);
    attach(m, vision("pixtral", tower, projector, layers, vh));
    return m;
}

// The Qwen vision towers' shared patch merger: a norm over the tower width, then [h m^2 -> h m^2] and [h m^2 -> out]
// with biases (Qwen2VL PatchMerger, Qwen2_5_VLPatchMerger, Qwen3VLVisionPatchMerger).
int64_t qwen_merger(int64_t h, int64_t merge, int64_t out, int64_t norm_params) {
    const int64_t wide = h * merge * merge;
    return norm_params + linear(wide, wide, true) + linear(wide, out, true);
}

struct QwenVision {
    int64_t h, depth, patch_in, merge;
};

QwenVision qwen_vision_shape(const Fields& v, const char* width_key) {
    QwenVision s;
    s.h = need_int(v, {width_key});
    s.depth = need_int(v, {"depth"}, 1, kMaxLayers);
    const int64_t patch = need_int(v, {"patch_size", "spatial_patch_size"});
    const int64_t channels = opt_int(v, {"in_channels", "in_chans"}, 3, 1);
    const int64_t temporal = opt_int(v, {"temporal_patch_size"}, 2, 1, 64);
    s.patch_in = channels * temporal * patch * patch;   // Conv3d kernel [temporal, patch, patch]
    s.merge = opt_int(v, {"spatial_merge_size"}, 2, 1, 64);
    return s;
}

// Qwen2-VL (transformers qwen2_vl/modeling_qwen2_vl.py Qwen2VisionTransformerPretrainedModel): Conv3d patch embed
// without bias, blocks of fused qkv and proj with biases, fc1/fc2 (embed_dim x mlp_ratio) with biases, two LayerNorms;
// PatchMerger: ln_q LayerNorm(embed_dim), MLP into hidden_size (the text width).
EncoderSpec qwen2_vl_vision(const Fields& v) {
    const QwenVision s = qwen_vision_shape(v, "embed_dim");
    const TowerBlock b{s.h, s.h * need_int(v, {"mlp_ratio"}), true, true, false, true};
    const int64_t merger = qwen_merger(s.h, s.merge, need_int(v, {"hidden_size"}), 2 * s.h);
    return vision("qwen2_vl", s.patch_in * s.h + s.depth * b.params(), merger, s.depth, s.h);
}

// Qwen2.5-VL (qwen2_5_vl/modeling_qwen2_5_vl.py Qwen2_5_VisionTransformerPretrainedModel): the same patch embed, blocks
// with RMSNorms and a gated MLP with biases (Qwen2_5_VLMLP(bias=True)); merger ln_q is an RMSNorm, output out_hidden_size.
EncoderSpec qwen2_5_vl_vision(const Fields& v) {
    const QwenVision s = qwen_vision_shape(v, "hidden_size");
    const TowerBlock b{s.h, need_int(v, {"intermediate_size"}), true, true, true, false};
    const int64_t merger = qwen_merger(s.h, s.merge, need_int(v, {"out_hidden_size"}), s.h);
    return vision("qwen2_5_vl", s.patch_in * s.h + s.depth * b.params(), merger, s.depth, s.h);
}

// Qwen3-VL (qwen3_vl/modeling_qwen3_vl.py Qwen3VLVisionModel): Conv3d patch embed with bias, a learned position table
// (num_position_embeddings rows), blocks of qkv/proj and linear_fc1/fc2 with biases and two LayerNorms; the merger
// (LayerNorm over the tower width) and one more merger per deepstack_visual_indexes entry (LayerNorm over h m^2).
EncoderSpec qwen3_vl_vision(const Fields& v) {
    const QwenVision s = qwen_vision_shape(v, "hidden_size");
    const TowerBlock b{s.h, need_int(v, {"intermediate_size"}), true, true, false, true};
    const int64_t out = need_int(v, {"out_hidden_size"});
    const int64_t positions = need_int(v, {"num_position_embeddings"});
    const int64_t deepstack = static_cast<int64_t>(layer_list(v, "deepstack_visual_indexes").size());
    const int64_t wide = s.h * s.merge * s.merge;
    const int64_t mergers = qwen_merger(s.h, s.merge, out, 2 * s.h) + deepstack * qwen_merger(s.h, s.merge, out, 2 * wide);
    return vision("qwen3_vl", s.patch_in * s.h + s.h + positions * s.h + s.depth * b.params(), mergers, s.depth, s.h);
}

// The Qwen VL families: the text model (a qwen2 / qwen3 / qwen3_moe decoder) and the vision tower.
template <EncoderSpec (*Tower)(const Fields&)>
ModelSpec read_qwen_vl(const Fields& f, const char* text_family) {
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    ModelSpec m = f.has("text_config") ? text_model(f, f.child("text_config"), text_family) : text_model(f, f, text_family);
    attach(m, Tower(f.child("vision_config")));
    return m;
}

// MllamaVisionModel (transformers mllama/modeling_mllama.py): Conv2d patch embedding without bias, class embedding,
// gated_positional_embedding (gate, ((image/patch)^2 + 1) x hidden table, tile_embedding of (max_aspect_ratio_id + 1)
// rows of max_num_tiles x patches x hidden), pre/post tile embeddings ((max_aspect_ratio_id + 1) x max_num_tiles x
// hidden, each with a gate), layernorm_pre/post, num_hidden_layers blocks (q/k/v/o without bias, fc1/fc2 with bias,
// two LayerNorms) and num_global_layers gated blocks (two gates each). max_aspect_ratio_id = len(supported_aspect_ratios)
// (MllamaVisionConfig; its default lists 8 ratios).
EncoderSpec mllama_vision(const Fields& v, int64_t text_hidden) {
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t local = need_int(v, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t global = need_int(v, {"num_global_layers"}, 0, kMaxLayers);
    const int64_t image = need_int(v, {"image_size"});
    const int64_t patch = need_int(v, {"patch_size"});
    const int64_t tiles = need_int(v, {"max_num_tiles"});
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    if (image % patch != 0) v.fail("patch_size", "does not divide image_size " + std::to_string(image));
    const Json* ratios = v.raw("supported_aspect_ratios");
    if (ratios && !ratios->is_array()) v.fail("supported_aspect_ratios", "expected a list of [w, h] tile layouts");
    const int64_t ratio_rows = (ratios ? static_cast<int64_t>(ratios->size()) : 8) + 1;
    const int64_t patches = (image / patch) * (image / patch) + 1;
    TowerBlock b{h, need_int(v, {"intermediate_size"}), false, true, false, true};
    const int64_t positions = 1 + patches * h + ratio_rows * tiles * patches * h + 2 * (ratio_rows * tiles * h + 1);
    const int64_t p = channels * patch * patch * h + h + positions + 2 * 2 * h + (local + global) * b.params() + 2 * global;
    // multi_modal_projector: Linear(vision_output_dim, text hidden) with bias.
    EncoderSpec e = vision("mllama", p, linear(need_int(v, {"vision_output_dim"}), text_hidden, true), local + global, h);
    e.intermediate = b.ffn;   // every block (local and global) is q/k/v/o of h x h and fc1, fc2: LoRA's layout
    return e;
}

// mllama (MllamaForConditionalGeneration): the text model is Llama 3.1's blocks with cross-attention blocks at
// cross_attention_layers, which the text model holds: each replaces self-attention by attention over the image states
// (q/k/v/o of the same shapes, q_norm and k_norm RMSNorm(head_dim)) and gates attention and MLP (one scalar each);
// embed_tokens has vocab_size + 8 rows (MllamaTextModel). Defaults: MllamaTextConfig (mllama/configuration_mllama.py).
ModelSpec read_mllama(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields t = f.child("text_config");
    const Json holder = with_defaults(t.node(), {{"vocab_size", 128256}, {"hidden_size", 4096}, {"num_hidden_layers", 40},
                                                 {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                                                 {"intermediate_size", 14336}});
    const Fields text(holder, t.file(), t.path());
    ModelSpec m = text_model(f, text, "llama");
    std::vector<int64_t> cross = layer_list(text, "cross_attention_layers");
    if (!text.has("cross_attention_layers")) cross = {3, 8, 13, 18, 23, 28, 33, 38};   // MllamaTextConfig default
    for (const int64_t i : cross) {
        if (i < 0 || i >= static_cast<int64_t>(m.layers.size()))
            text.fail("cross_attention_layers", "layer " + std::to_string(i) + " is not one of the " +
                                                    std::to_string(m.layers.size()) + " layers");
        LayerSpec& l = m.layers[size_t(i)];
        l.attends_encoder = true;
        l.qk_norm = true;
        l.qk_norm_params = 2 * l.head_dim;
    }
    m.extra_params = 8 * m.hidden + 2 * static_cast<int64_t>(cross.size());   // embedding rows + gates
    attach(m, mllama_vision(f.child("vision_config"), m.hidden));
    return m;
}

// MOSS-VL (OpenMOSS-Team/MOSS-VL-*, remote code modeling_moss_vl.py MossVLVisionModel): Qwen3-VL's tower (Conv3d
// patch embed with bias, a learned position table, blocks of qkv/proj and linear_fc1/fc2 with biases and two
// LayerNorms) and one merger over the last block's and every deepstack_visual_indexes block's features concatenated
// (MossVLVisionPatchMerger: a LayerNorm(hidden) per feature, linear_fc1 [h m^2 (1 + deepstack) -> same] and linear_fc2
// [-> out_hidden_size], with biases), not Qwen3-VL's merger per deepstack feature.
EncoderSpec moss_vl_vision(const Fields& v) {
    const QwenVision s = qwen_vision_shape(v, "hidden_size");
    const TowerBlock b{s.h, need_int(v, {"intermediate_size"}), true, true, false, true};
    const int64_t features = 1 + static_cast<int64_t>(layer_list(v, "deepstack_visual_indexes").size());
    const int64_t wide = s.h * s.merge * s.merge * features;
    const int64_t out = need_int(v, {"out_hidden_size"});
    const int64_t merger = features * 2 * s.h + linear(wide, wide, true) + linear(wide, out, true);
    const int64_t positions = need_int(v, {"num_position_embeddings"});
    return vision("moss_vl", s.patch_in * s.h + s.h + positions * s.h + s.depth * b.params(), merger, s.depth, s.h);
}

// moss_vl (MossVLForConditionalGeneration): a Qwen3 text model (q_norm / k_norm RMSNorm(head_dim)) whose layers at
// text_config.cross_attention_layers are MossVLCrossAttentionDecoderLayer: attention over the vision states with the
// same q/k/v/o and q/k norm shapes, the same MLP and two norms, and two scalar tanh gates; MossVLModel also learns a
// separator_token of out_hidden_size that follows each image's or frame's vision tokens.
ModelSpec read_moss_vl(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields text = f.child("text_config");
    if (!text.has("cross_attention_layers"))
        text.fail("cross_attention_layers", "missing (the layers that attend to the vision states)");
    ModelSpec m = text_model(f, text, "qwen3");
    const std::vector<int64_t> cross = layer_list(text, "cross_attention_layers");
    for (const int64_t i : cross) {
        if (i < 0 || i >= static_cast<int64_t>(m.layers.size()))
            text.fail("cross_attention_layers", "layer " + std::to_string(i) + " is not one of the " +
                                                    std::to_string(m.layers.size()) + " layers");
        m.layers[size_t(i)].attends_encoder = true;
    }
    const Fields v = f.child("vision_config");
    // The two gates of each cross-attention layer and the separator token.
    m.extra_params = 2 * static_cast<int64_t>(cross.size()) + need_int(v, {"out_hidden_size"});
    attach(m, moss_vl_vision(v));
    return m;
}

// torchtitan's vlm experiment (torchtitan/experiments/vlm, Llama3Siglip2Transformer in model/model.py), which has no
// HF checkpoint: the torchtitan importer writes its flavor as this config. A Llama 3 text model (text_config) and a
// SigLIP2 encoder (model/siglip2.py VisionTransformer: patch_embedding Linear [channels x patch^2 -> dim] with bias,
// position_embedding of n_pos_embs^2 rows (num_patches, as HF Siglip2VisionConfig names it), blocks of
// q/k/v/out_proj and fc1/fc2 with biases and two LayerNorms, post_layernorm), projected by Projector (w1 [dim -> dim],
// w2 [dim -> text dim], with biases).
ModelSpec read_llama3_siglip2(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision encoder's config)");
    ModelSpec m = text_model(f, f.child("text_config"), "llama");
    const Fields v = f.child("vision_config");
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t layers = need_int(v, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t patch = need_int(v, {"patch_size"});
    const int64_t channels = need_int(v, {"num_channels"});
    const TowerBlock b{h, need_int(v, {"intermediate_size"}), true, true, false, true};
    const int64_t tower = linear(channels * patch * patch, h, true) + need_int(v, {"num_patches"}) * h +
                          layers * b.params() + 2 * h;
    attach(m, vision("siglip2", tower, linear(h, h, true) + linear(h, m.hidden, true), layers, h));
    return m;
}

// ---- SmolVLM, InternVL, GLM-4.1V / 4.6V, Voxtral ----------------------------------------------------------------------

// An image or patch size given as one integer or as [height, width] (InternVLVisionConfig accepts both).
std::pair<int64_t, int64_t> size_pair(const Fields& f, const char* key) {
    const Json* v = f.raw(key);
    if (v && v->is_array()) {
        if (v->size() != 2 || !(*v)[0].is_number_integer() || !(*v)[1].is_number_integer() || (*v)[0].get<int64_t>() < 1 ||
            (*v)[1].get<int64_t>() < 1 || (*v)[0].get<int64_t>() > kMaxDim || (*v)[1].get<int64_t>() > kMaxDim)
            f.fail(key, "expected a positive integer or a list [height, width] of positive integers");
        return {(*v)[0].get<int64_t>(), (*v)[1].get<int64_t>()};
    }
    const int64_t n = need_int(f, {key});
    return {n, n};
}

// The text model of a composite config from its text_config, whose model_type must be one of `types` (the first is
// the config class's default when text_config names none).
ModelSpec nested_text(const Fields& f, const char* family, std::initializer_list<const char*> types) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    const Fields t = f.child("text_config");
    const std::string type = t.get_string("model_type").value_or(*types.begin());
    std::string list;
    for (const char* k : types) {
        if (type == k) return text_model(f, t, type);
        list += (list.empty() ? "" : ", ") + std::string(k);
    }
    t.fail("model_type", "text model '" + type + "' is not one the " + family + " reader takes (" + list + ")");
}

// smolvlm (SmolVLMForConditionalGeneration, transformers smolvlm/modeling_smolvlm.py, read at commit 00b676f8): the
// text model (text_config, a llama) and SmolVLMVisionTransformer: SmolVLMVisionEmbeddings (Conv2d patch_embedding
// with bias, position_embedding of (image/patch)^2 rows), blocks of q/k/v/out_proj and fc1/fc2 with biases and two
// LayerNorms, post_layernorm; SmolVLMConnector: pixel shuffle by scale_factor, then SmolVLMSimpleMLP.proj
// [vision hidden x scale_factor^2 -> text hidden] without bias. lm_head [text hidden -> vocab] without bias.
ModelSpec read_smolvlm(const Fields& f) {
    ModelSpec m = nested_text(f, "smolvlm", {"llama"});
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields v = f.child("vision_config");
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t layers = need_int(v, {"num_hidden_layers"}, 1, kMaxLayers);
    const int64_t image = need_int(v, {"image_size"});
    const int64_t patch = need_int(v, {"patch_size"});
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);   // SmolVLMVisionConfig num_channels=3
    // num_patches_per_side = image_size // patch_size (384 // 14 = 27 for the SigLIP so400m tower).
    const int64_t scale = need_int(f, {"scale_factor"}, 1, 64);
    const TowerBlock b{h, need_int(v, {"intermediate_size"}), true, true, false, true};
    const int64_t tower = linear(channels * patch * patch, h, true) + (image / patch) * (image / patch) * h +
                          layers * b.params() + 2 * h;
    attach(m, vision("smolvlm_vision", tower, linear(h * scale * scale, m.hidden, false), layers, h));
    return m;
}

// InternVLVisionModel (transformers internvl/modeling_internvl.py, read at commit 00779a6b; defaults
// InternVLVisionConfig in configuration_internvl.py): cls_token, mask_token (use_mask_token, default false), Conv2d
// patch projection with bias, position_embeddings of num_patches + 1 rows (use_absolute_position_embeddings, default
// true); blocks of q/k/v (attention_bias, default false), projection_layer with bias, q_norm/k_norm RMSNorm(hidden)
// (use_qk_norm, default false), fc1/fc2 with biases, layernorm_before/after (norm_type layer_norm with bias, or
// rms_norm), lambda_1 and lambda_2 (hidden each); a final LayerNorm unless use_mean_pooling (default true).
int64_t internvl_tower(const Fields& v, int64_t h, int64_t layers) {
    const auto [image_h, image_w] = v.has("image_size") ? size_pair(v, "image_size") : std::pair<int64_t, int64_t>{448, 448};
    const auto [patch_h, patch_w] = v.has("patch_size") ? size_pair(v, "patch_size") : std::pair<int64_t, int64_t>{14, 14};
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    const std::string norm = v.get_choice("norm_type", {"layer_norm", "rms_norm"}).value_or("layer_norm");
    const bool qkv_bias = opt_bool(v, "attention_bias", false);
    const int64_t inter = need_int(v, {"intermediate_size"});
    int64_t block = 3 * linear(h, h, qkv_bias) + linear(h, h, true) + linear(h, inter, true) + linear(inter, h, true);
    block += (opt_bool(v, "use_qk_norm", false) ? 2 * h : 0) + 2 * (norm == "layer_norm" ? 2 * h : h) + 2 * h;
    const int64_t patches = (image_h / patch_h) * (image_w / patch_w);
    int64_t p = h + (opt_bool(v, "use_mask_token", false) ? h : 0) + linear(channels * patch_h * patch_w, h, true);
    if (opt_bool(v, "use_absolute_position_embeddings", true)) p += (patches + 1) * h;
    p += layers * block;
    if (!opt_bool(v, "use_mean_pooling", true)) p += 2 * h;
    return p;
}

// internvl (InternVLForConditionalGeneration): the text model (text_config; InternVLConfig defaults it to qwen2),
// the InternViT tower and InternVLMultiModalProjector: LayerNorm over vision hidden x r^2, linear_1 [vision hidden x
// r^2 -> text hidden] and linear_2 [text -> text], with biases, where r = int(1 / downsample_ratio) (pixel shuffle;
// InternVLConfig downsample_ratio 0.5). lm_head [text hidden -> vocab] without bias.
ModelSpec read_internvl(const Fields& f) {
    ModelSpec m = nested_text(f, "internvl", {"qwen2", "qwen3", "llama"});
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields v = f.child("vision_config");
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t layers = need_int(v, {"num_hidden_layers"}, 1, kMaxLayers);
    const double ratio = f.get_number("downsample_ratio", 1e-6, 1).value_or(0.5);
    const int64_t r = static_cast<int64_t>(1.0 / ratio);   // Python int(): truncation
    const int64_t wide = h * r * r;
    const int64_t projector = 2 * wide + linear(wide, m.hidden, true) + linear(m.hidden, m.hidden, true);
    attach(m, vision("internvl_vision", internvl_tower(v, h, layers), projector, layers, h));
    return m;
}

// Glm4vVisionModel (transformers glm4v/modeling_glm4v.py, read at commit 005612ef; Glm46V reuses it, glm46v/
// modular_glm46v.py): position_embedding of (image_size / patch_size)^2 rows, Conv3d patch_embed [temporal, patch,
// patch] with bias, post_conv_layernorm (RMSNorm), blocks of norm1/norm2 (RMSNorm), qkv (bias: attention_bias,
// Glm4vVisionConfig default false), proj without bias and a gated MLP of width out_hidden_size without biases,
// post_layernorm (RMSNorm); into the text model: downsample Conv2d [hidden -> out_hidden_size, kernel
// spatial_merge_size] with bias and Glm4vVisionPatchMerger: proj [out -> out], post_projection_norm LayerNorm(out),
// gate/up [out -> intermediate_size], down [intermediate_size -> out], without biases.
EncoderSpec glm4v_vision(const Fields& v) {
    const int64_t h = need_int(v, {"hidden_size"});
    const int64_t depth = need_int(v, {"depth"}, 1, kMaxLayers);
    const int64_t out = need_int(v, {"out_hidden_size"});
    const int64_t inter = need_int(v, {"intermediate_size"});
    const int64_t image = need_int(v, {"image_size"});
    const int64_t patch = need_int(v, {"patch_size"});   // num_patches = (image_size // patch_size)^2
    const int64_t channels = opt_int(v, {"in_channels"}, 3, 1);
    const int64_t temporal = opt_int(v, {"temporal_patch_size"}, 2, 1, 64);
    const int64_t merge = opt_int(v, {"spatial_merge_size"}, 2, 1, 64);
    const int64_t block = 2 * h + linear(h, 3 * h, opt_bool(v, "attention_bias", false)) + h * h + 3 * h * out;
    const int64_t tower = (image / patch) * (image / patch) * h + linear(channels * temporal * patch * patch, h, true) +
                          h + depth * block + h;
    const int64_t merger = linear(h * merge * merge, out, true) + out * out + 2 * out + 3 * out * inter;
    return vision("glm4v", tower, merger, depth, h);
}

// glm4v / glm46v (Glm4vForConditionalGeneration, Glm46VForConditionalGeneration): the text model is
// Glm4vTextModel, the glm4 decoder layout (Glm4vTextDecoderLayer: input, post_self_attn, post_attention and post_mlp
// RMSNorms; gate_up_proj and down_proj without biases) whose attention puts biases on q/k/v always and takes
// head_dim = hidden_size / num_attention_heads (Glm4vTextAttention); read by the glm4 row of hf_config_dense.cpp
// with those two fixed. lm_head [text hidden -> vocab] without bias; Glm4vConfig tie_word_embeddings default false.
ModelSpec read_glm4v(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    if (!f.has("vision_config")) f.fail("vision_config", "missing (the vision tower's config)");
    const Fields t = f.child("text_config");
    const int64_t hidden = need_int(t, {"hidden_size"});
    const int64_t heads = need_int(t, {"num_attention_heads"});
    check_divisible(t, "num_attention_heads", hidden, heads);
    Json holder = t.node();
    holder["head_dim"] = hidden / heads;
    holder["attention_bias"] = true;
    const auto& dense = dense_families();
    const auto glm4 = std::find_if(dense.begin(), dense.end(), [](const FamilyReader& r) {
        return std::string(r.model_type) == "glm4";
    });
    if (glm4 == dense.end()) throw std::logic_error("the glm4 dense family is not registered");
    ModelSpec m = glm4->read(Fields(holder, t.file(), t.path()));
    if (f.has("tie_word_embeddings")) m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", false);
    attach(m, glm4v_vision(f.child("vision_config")));
    return m;
}

// VoxtralEncoder (transformers voxtral/modeling_voxtral.py, read at commit 00aa0f5d; a Whisper encoder): conv1
// Conv1d [num_mel_bins -> d, kernel 3] and conv2 Conv1d [d -> d, kernel 3] with biases, embed_positions of
// max_source_positions rows (an nn.Embedding kept frozen, saved in the checkpoint), blocks of q/v/out_proj with biases
// and k_proj without, fc1/fc2 with biases and two LayerNorms, a final LayerNorm. Defaults: VoxtralEncoderConfig
// (configuration_voxtral.py: hidden 1280, intermediate 5120, 32 layers, 128 mel bins, 1500 positions; its docstring:
// the audio encoder of mistralai/Voxtral-Mini-3B-2507), under its key names or the Whisper names it maps.
EncoderSpec voxtral_audio(const Fields& a, int64_t text_hidden) {
    const int64_t d = opt_int(a, {"hidden_size", "d_model"}, 1280, 1);
    const int64_t layers = opt_int(a, {"num_hidden_layers", "encoder_layers"}, 32, 1, kMaxLayers);
    const int64_t ffn = opt_int(a, {"intermediate_size", "encoder_ffn_dim"}, 5120, 1);
    const int64_t mel = opt_int(a, {"num_mel_bins"}, 128, 1);
    const int64_t positions = opt_int(a, {"max_source_positions"}, 1500, 1);
    const int64_t block = 3 * linear(d, d, true) + d * d + 2 * 2 * d + linear(d, ffn, true) + linear(ffn, d, true);
    const int64_t p = linear(mel * 3, d, true) + linear(d * 3, d, true) + positions * d + layers * block + 2 * d;
    // VoxtralMultiModalProjector: linear_1 [audio intermediate_size -> text hidden], linear_2 [text -> text], no biases.
    EncoderSpec e = vision("voxtral_encoder", p, ffn * text_hidden + text_hidden * text_hidden, layers, d);
    e.modality = "audio";
    return e;
}

// voxtral (VoxtralForConditionalGeneration): the text model is AutoModelForCausalLM of text_config, built by
// VoxtralConfig with _default_text_config_kwargs under the fields the file gives (vocab 131072, hidden 3072,
// intermediate 8192, 30 layers, 8 KV heads, head_dim 128) and LlamaConfig's num_attention_heads 32; that causal LM
// ties its head or not from text_config alone (the top-level flag is not read).
ModelSpec read_voxtral(const Fields& f) {
    if (!f.has("text_config")) f.fail("text_config", "missing (the language model's config)");
    const Fields t = f.child("text_config");
    const std::string type = t.get_string("model_type").value_or("llama");
    if (type != "llama")
        t.fail("model_type", "text model '" + type + "' of a voxtral checkpoint is not one ftbound reads (llama)");
    const Json holder = with_defaults(t.node(), {{"vocab_size", 131072}, {"hidden_size", 3072},
                                                 {"intermediate_size", 8192}, {"num_hidden_layers", 30},
                                                 {"num_key_value_heads", 8}, {"head_dim", 128},
                                                 {"num_attention_heads", 32}});
    ModelSpec m = llama_like(Fields(holder, t.file(), t.path()), "llama");
    if (!f.has("audio_config")) f.fail("audio_config", "missing (the audio encoder's config)");
    attach(m, voxtral_audio(f.child("audio_config"), m.hidden));
    return m;
}

// ---- PaddleOCR-VL -------------------------------------------------------------------------------------------------

// paddleocr_vl (PaddleOCRVLForConditionalGeneration; transformers modular_paddleocr_vl.py, commit 059101b2).
// The text model is Ernie4_5Model (PaddleOCRTextModel): the Llama layout, q/k/v/o and gate/up/down with a bias each
// under use_bias; its fields sit at the top level of the published config (PaddleOCRVLConfig.__post_init__ pops them
// into text_config when text_config is absent), with PaddleOCRTextConfig's defaults (configuration_paddleocr_vl.py,
// commit 008e5743): 18 layers of 1024, 16 heads / 2 KV heads of 128, FFN 3072, 103,424 tokens. tie_word_embeddings is
// the outer config's (PaddleOCRVLConfig default true).
ModelSpec paddleocr_text(const Fields& f, Json& holder) {
    const bool nested = f.has("text_config") && !f.raw("text_config")->is_null();
    const Fields t = nested ? f.child("text_config") : f;
    holder = with_defaults(t.node(), {{"vocab_size", 103424}, {"hidden_size", 1024}, {"intermediate_size", 3072},
                                      {"num_hidden_layers", 18}, {"num_attention_heads", 16},
                                      {"num_key_value_heads", 2}, {"head_dim", 128}});
    const Fields text(holder, t.file(), t.path());
    ModelSpec m = llama_like(text, "llama");
    const bool bias = opt_bool(text, "use_bias", false);
    for (LayerSpec& l : m.layers) l.qkv_bias = l.o_bias = l.mlp_bias = bias;
    m.tie_word_embeddings = opt_bool(f, "tie_word_embeddings", true);
    return m;
}

// PaddleOCRVisionModel: SiglipVisionEmbeddings (patch_embedding Conv2d with bias, position_embedding of
// (image_size // patch_size)^2 rows), blocks of q/k/v/out_proj and fc1/fc2 with biases and two LayerNorms, post_layernorm.
// The checkpoint also stores packing_position_embedding and vision_model.head, which PaddleOCRVLModel skips on load
// (_keys_to_ignore_on_load_unexpected): not counted. PaddleOCRProjector: pre_norm LayerNorm(vision hidden), linear_1
// [h m^2 -> h m^2] and linear_2 [h m^2 -> text hidden] with biases, m = spatial_merge_size. Defaults:
// PaddleOCRVisionConfig (27 layers of 1152, FFN 4304, image 384, patch 14, merge 2).
EncoderSpec paddleocr_vision(const Fields& v, int64_t text_hidden) {
    const int64_t h = opt_int(v, {"hidden_size"}, 1152, 1);
    const int64_t layers = opt_int(v, {"num_hidden_layers"}, 27, 1, kMaxLayers);
    const int64_t image = opt_int(v, {"image_size"}, 384, 1);
    const int64_t patch = opt_int(v, {"patch_size"}, 14, 1);
    const int64_t channels = opt_int(v, {"num_channels"}, 3, 1);
    const int64_t merge = opt_int(v, {"spatial_merge_size"}, 2, 1, 64);
    const TowerBlock b{h, opt_int(v, {"intermediate_size"}, 4304, 1), true, true, false, true};
    // SiglipVisionEmbeddings: num_patches = (image_size // patch_size) ** 2 (384 // 14 = 27: 729 rows)
    const int64_t positions = (image / patch) * (image / patch);
    const int64_t wide = h * merge * merge;
    if (double(positions) * double(h) > 1e15 || double(wide) * double(wide + text_hidden) > 1e15 ||
        double(channels) * double(patch) * double(patch) * double(h) > 1e15 ||
        double(layers) * double(h) * double(h + b.ffn) > 1e15)
        v.fail("hidden_size", "the vision tower's shapes describe more than 10^15 parameters");
    const int64_t tower = linear(channels * patch * patch, h, true) + positions * h + layers * b.params() + 2 * h;
    return vision("paddleocr_vl", tower, 2 * h + linear(wide, wide, true) + linear(wide, text_hidden, true), layers, h);
}

ModelSpec read_paddleocr_vl(const Fields& f) {
    Json holder;
    ModelSpec m = paddleocr_text(f, holder);
    const Json empty = Json::object();
    const Fields v = f.has("vision_config") ? f.child("vision_config") : Fields(empty, f.file(), f.path_of("vision_config"));
    attach(m, paddleocr_vision(v, m.hidden));
    return m;
}

}  // namespace

EncoderSpec qwen3_vl_vision_tower(const Fields& v) { return qwen3_vl_vision(v); }

const std::vector<FamilyReader>& vlm_families() {
    static const std::vector<FamilyReader> families = {
        {"llava", read_llava},
        {"mistral3", read_mistral3},
        {"mllama", read_mllama},
        {"moss_vl", read_moss_vl},
        {"qwen2_vl", [](const Fields& f) { return read_qwen_vl<qwen2_vl_vision>(f, "qwen2"); }},
        {"qwen2_5_vl", [](const Fields& f) { return read_qwen_vl<qwen2_5_vl_vision>(f, "qwen2"); }},
        {"qwen3_vl", [](const Fields& f) { return read_qwen_vl<qwen3_vl_vision>(f, "qwen3"); }},
        {"qwen3_vl_moe", [](const Fields& f) { return read_qwen_vl<qwen3_vl_vision>(f, "qwen3_moe"); }},
        {"llama3_siglip2", read_llama3_siglip2},
        {"smolvlm", read_smolvlm},
        {"internvl", read_internvl},
        {"glm4v", read_glm4v},
        {"glm46v", read_glm4v},
        {"voxtral", read_voxtral},
        {"paddleocr_vl", read_paddleocr_vl},
    };
    return families;
}

}  // namespace ftb::hf
