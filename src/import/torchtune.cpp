// torchtune recipe YAML (recipes/configs/llama3_1/8B_lora_single_device.yaml, 8B_qlora_single_device.yaml,
// 8B_full.yaml, ...): model._component_ (torchtune.models.<family>.[lora_|qlora_]<family>_<size>) with
// lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output, lora_rank, lora_alpha, lora_dropout;
// checkpointer.checkpoint_dir (the HF download folder, named after the model); tokenizer.max_seq_len;
// dataset.packed; batch_size; gradient_accumulation_steps; epochs; optimizer._component_; optimizer_in_bwd;
// loss._component_; dtype; enable_activation_checkpointing; enable_activation_offloading; compile;
// fsdp_cpu_offload (distributed recipes shard with FSDP2).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "ftbound/error.hpp"
#include "import/trainer_fields.hpp"
#include "spec/catalog.hpp"

namespace ftb::import {
namespace {

std::string component(Mapper& m, const std::string& key) {
    const Json* c = m.take(key + "._component_");
    return c && c->is_string() ? c->get<std::string>() : "";
}

// torchtune module names -> HF module names (torchtune/models/convert_weights.py _FROM_HF).
std::string hf_module(const std::string& t) {
    if (t == "output_proj") return "o_proj";
    return t;
}

// "torchtune.models.llama3_1.lora_llama3_1_8b" -> "llama3.1_8b", "torchtune.models.qwen2.qwen2_0_5b" -> "qwen2_0.5b"
// (names the catalog resolves). The builder is <package>_<size>[_instruct], the package one of torchtune/models/'s
// (llama3_1/_model_builders.py llama3_1_8b, qwen2/_model_builders.py qwen2_0_5b, qwen2_5 qwen2_5_1_5b_instruct, ...):
// the package's underscores are version dots, the size's are decimal points.
std::string model_from_component(const std::string& comp) {
    std::string last = comp.substr(comp.rfind('.') + 1);
    for (const char* p : {"qlora_", "lora_"})
        if (last.rfind(p, 0) == 0) last = last.substr(std::string(p).size());
    const std::string package = [&] {
        const auto dot = comp.rfind('.');
        const auto prev = dot == std::string::npos ? std::string::npos : comp.rfind('.', dot - 1);
        return prev == std::string::npos ? std::string() : comp.substr(prev + 1, dot - prev - 1);
    }();
    std::string family, size = last;
    if (!package.empty() && last.rfind(package + "_", 0) == 0) {
        family = package;
        std::replace(family.begin(), family.end(), '_', '.');
        size = last.substr(package.size() + 1);
    }
    // "0_5" -> "0.5" between digits, by a scan (std::regex recurses per character: a long name overflowed the stack).
    // Matches do not overlap, as regex_replace's: "3_1_8" -> "3.1_8".
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    for (size_t i = 1; i + 1 < size.size(); ++i)
        if (size[i] == '_' && digit(size[i - 1]) && digit(size[i + 1])) size[i] = '.', i += 2;
    return family.empty() ? size : family + "_" + size;
}

void map_lora(Mapper& m, const std::string& comp) {
    const bool qlora = comp.find(".qlora_") != std::string::npos;
    m.set("train.method", qlora ? "qlora" : "lora", "model._component_: " + comp);
    if (qlora) m.set("train.qlora.bits", 4, "qlora_ builder (NF4 base weights)");
    if (const int64_t r = whole(m, "model.lora_rank")) m.set("train.lora.rank", r, "model.lora_rank: " + std::to_string(r));
    if (const Json* a = m.take("model.lora_alpha"); a && a->is_number()) m.set("train.lora.alpha", a->get<double>(), "model.lora_alpha: " + a->dump());
    if (const Json* d = m.take("model.lora_dropout"); d && d->is_number()) m.set("train.lora.dropout", d->get<double>(), "model.lora_dropout: " + d->dump());
    OJson targets = OJson::array();
    if (const Json* attn = m.take("model.lora_attn_modules"); attn && attn->is_array())
        for (const auto& t : *attn) targets.push_back(hf_module(show_value(t)));
    if (flag(m, "model.apply_lora_to_mlp"))
        for (const char* t : {"gate_proj", "up_proj", "down_proj"}) targets.push_back(t);   // w1, w3, w2
    if (flag(m, "model.apply_lora_to_output")) targets.push_back("lm_head");
    if (targets.empty()) m.fail("model.lora_attn_modules", "no LoRA targets");
    m.set("train.lora.targets", targets, "model.lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output");
}

std::string optimizer_from_component(const std::string& comp, std::string& note) {
    if (comp == "torch.optim.AdamW") return "adamw";
    if (comp == "torch.optim.Adam") return "adam";
    if (comp == "torch.optim.SGD") return "sgd_momentum";
    if (comp.find("PagedAdamW8bit") != std::string::npos) return "paged_adamw_8bit";
    if (comp.find("PagedAdamW") != std::string::npos) return "paged_adamw";   // PagedAdamW, PagedAdamW32bit
    if (comp.find("AdamW8bit") != std::string::npos) return "adamw_8bit";
    note = "optimizer '" + comp + "' planned as AdamW";
    return "adamw";
}

// Recipes that train nothing: `tune run generate` (recipes/configs/generation.yaml: prompt, max_new_tokens) and
// `tune run eleuther_eval` (recipes/configs/*/evaluation.yaml: tasks, limit) carry no optimizer.
void reject_non_training(const Mapper& m) {
    const Json& src = m.source();
    if (src.contains("optimizer")) return;
    if (src.contains("max_new_tokens") || src.contains("prompt"))
        m.fail("optimizer", "missing: a generation recipe (prompt, max_new_tokens), not a training job: ftbound plans "
                            "fine-tuning jobs");
    if (src.contains("tasks"))
        m.fail("optimizer", "missing: an evaluation recipe (eleuther_eval tasks), not a training job: ftbound plans "
                            "fine-tuning jobs");
}

// tokenizer.max_seq_len null: the tokenizer does not truncate (torchtune/models/llama3/_tokenizer.py l.330
// `if self.max_seq_len:`, the same in every model tokenizer) and padded_collate_sft pads each batch to its longest
// sample, so the length is the data set's. For the Alpaca builders torchtune documented one: before max_seq_len
// moved to the tokenizer, alpaca_dataset truncated at `max_seq_len: int = 512` ("Default is 512";
// torchtune/datasets/_alpaca.py, commit 0432b3a5), Stanford Alpaca's training length; alpaca_cleaned_dataset is the
// same builder on yahma/alpaca-cleaned. That length is planned as an assumption the import report states (a batch
// whose longest sample is longer runs longer); any other data set has no documented length: only the user can give it.
int64_t documented_seq_len(const std::string& dataset_component) {
    for (const char* alpaca : {"torchtune.datasets.alpaca_dataset", "torchtune.datasets.alpaca_cleaned_dataset"})
        if (dataset_component == alpaca) return 512;
    return 0;
}

void assume_untruncated_seq_len(Mapper& m) {
    // The dataset builders refuse to pack without a length (torchtune/datasets/_alpaca.py alpaca_dataset: "PackedDataset
    // requires a max_seq_len to be set on the tokenizer."): the recipe would not start.
    if (flag(m, "dataset.packed"))
        m.fail("tokenizer.max_seq_len", "null with dataset.packed: true: torchtune packs only to a set length "
                                        "(PackedDataset requires one); give --set train.seq_len=N");
    const std::string dataset = component(m, "dataset");
    const int64_t seq = documented_seq_len(dataset);
    if (!seq)
        m.fail("tokenizer.max_seq_len", "null: no truncation, so the sequence length is the data set's longest sample "
                                        "(the recipe does not state it); give --set train.seq_len=N");
    m.assume("train.seq_len", seq,
             "tokenizer.max_seq_len: null (no truncation; each batch is padded to its longest sample): " + dataset +
                 "'s documented max_seq_len default 512 (torchtune/datasets/_alpaca.py); a longer sample makes a "
                 "longer batch: --set train.seq_len=N for the data set's longest");
}

// torchtune's Llama 3.2 Vision builders (torchtune/models/llama3_2_vision/_model_builders.py at bd2a0fc7) train three
// parts apart (DeepFusionModel, modules/model_fusion/_deep_fusion.py l.82-95):
// - encoder: every encoder.* parameter, the CLIP tiles' encoder and its projection head;
// - fusion (get_fusion_params, _fusion_utils.py): FusionLayer.fusion_layer, the decoder's cross-attention layers
//   (_fusion_layers.py l.138-143), FusionEmbedding.fusion_embedding, the 8 image-token rows (l.236-240), and the
//   projection head, registered by register_fusion_module (llama3_2_vision/_encoder.py l.97): its 8 gated layers (HF
//   vision_model.global_transformer) and output Linear (HF multi_modal_projector); fusion removes them when frozen;
// - decoder: the self-attention layers, token embedding, final norm and output head.
// The full builders take booleans (defaults decoder False, encoder True, fusion True); the lora_ builders "full",
// "lora" or "frozen" (defaults "frozen", "lora", "lora"), "full" refused by their own assert ("We've temporarily
// removed support for mixed LoRA + Full Finetuning"). lora_llama3_2_vision_decoder puts adapters on the self-attention
// layers only if decoder_lora and on the cross-attention layers only if fusion_lora (_component_builders.py l.545,
// l.599); lora_llama3_2_vision_encoder on CLIP if encoder_lora, on the projection head's layers if fusion_lora (l.430,
// l.443); the LoRA recipes then train the adapters alone (lora_finetune_distributed.py l.523 set_trainable_params(model,
// get_adapter_params(model))). ftbound's parts: train.blocks (all or the cross-attention blocks) and train.encoder (the
// tower with its global layers, and the projector): the combinations below map; the rest fail naming the field.
std::string vision_part(Mapper& m, const char* key, bool lora_builder) {
    const Json* v = m.take(std::string("model.") + key);
    const char* builder_default = lora_builder ? (std::string(key) == "decoder_trainable" ? "frozen" : "lora")
                                               : (std::string(key) == "decoder_trainable" ? "false" : "true");
    std::string s = v ? show_value(*v) : builder_default;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lora_builder && s != "lora" && s != "frozen")
        m.fail(std::string("model.") + key, "'" + s + "': the lora_ builders take lora or frozen (\"full\" fails their "
                                            "assert: use llama3_2_vision_11b / _90b for full training)");
    if (!lora_builder && s != "true" && s != "false")
        m.fail(std::string("model.") + key, "'" + s + "': the full builders take True or False");
    return s == "true" ? "trained" : s == "false" ? "frozen" : s;
}

// image_size sizes CLIP's positional tables (clip_vision_encoder tile_size): the catalog checkpoint's is 560.
void check_image_size(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    if (!v) return;
    if (!v->is_number_integer() || v->get<int64_t>() != 560)
        m.fail(key, show_value(*v) + ": the catalog's Llama 3.2 Vision checkpoints have image_size 560 (their tile "
                                     "positional tables are sized for it); give 560");
}

void map_vision_parts(Mapper& m, const std::string& comp) {
    if (comp.find("llama3_2_vision") == std::string::npos) return;
    const bool lora = comp.find(".lora_") != std::string::npos || comp.find(".qlora_") != std::string::npos;
    const std::string decoder = vision_part(m, "decoder_trainable", lora);
    const std::string encoder = vision_part(m, "encoder_trainable", lora);
    const std::string fusion = vision_part(m, "fusion_trainable", lora);
    check_image_size(m, "model.image_size");
    check_image_size(m, "tokenizer.image_size");
    const std::string parts = "decoder " + decoder + ", encoder " + encoder + ", fusion " + fusion;
    const std::string on = lora ? "lora" : "trained";
    // The cross-attention layers are fusion parameters: a trained decoder beside a frozen fusion leaves them alone
    // frozen, and a frozen fusion beside a trained encoder trains CLIP without its projection head's global layers.
    if (fusion != on)
        m.fail("model.fusion_trainable", parts + ": ftbound trains the cross-attention blocks and the vision tower's "
                                                 "global layers with the rest of their part; give fusion_trainable " +
                                                 (lora ? std::string("lora") : std::string("True")));
    if (encoder != on)
        m.fail("model.encoder_trainable", parts + ": the projection head's global layers would train without the CLIP "
                                                  "layers below them, a split ftbound's vision tower does not have; "
                                                  "give encoder_trainable " + (lora ? std::string("lora") : std::string("True")));
    const bool decoder_trains = decoder == on;
    m.set("train.blocks", decoder_trains ? "all" : "cross_attention",
          "model.decoder_trainable: " + decoder + ", fusion_trainable: " + fusion +
              (decoder_trains ? " (every text block trains)" : " (only the cross-attention blocks, torchtune's fusion layers)"));
    m.set("train.encoder", lora ? "adapters" : "trained",
          "model.encoder_trainable: " + encoder + ", fusion_trainable: " + fusion +
              (lora ? " (LoRA on CLIP's and the projection head's layers; the projector frozen)" : " (CLIP and the projection head)"));
    // lora_llama3_2_vision_projection_head(apply_lora_to_output=...) adapts the projector's output Linear too.
    if (lora && flag(m, "model.apply_lora_to_output"))
        m.fail("model.apply_lora_to_output", "True: it also puts an adapter on the vision projection head's output "
                                              "Linear (lora_llama3_2_vision_encoder l.443), which ftbound does not "
                                              "plan; give False");
    m.note("Llama 3.2 Vision: the vision transform cuts an image into at most max_num_tiles 4 tiles of image_size 560 "
           "(llama3_2_vision_transform), 4 x ((560 / 14)^2 + 1) = 6404 encoder tokens per image; the encoder's compute "
           "per image is not in the step time (see the accuracy notes)");
}

}  // namespace

void read_torchtune(Mapper& m, const ImportOptions& o) {
    reject_non_training(m);
    const std::string comp = component(m, "model");
    if (comp.empty()) m.fail("model._component_", "missing: a recipe without one trained model (PPO's policy_model and "
                                                   "reward_model) is not supported: ftbound plans one trained model");
    map_vision_parts(m, comp);
    // The model: the checkpoint folder's name is the HF id's name (tune download saves to /tmp/<name>).
    std::string dir;
    if (const Json* d = m.take("checkpointer.checkpoint_dir"); d && d->is_string()) {
        dir = std::filesystem::path(d->get<std::string>()).lexically_normal().filename().string();
        if (dir.empty()) dir = std::filesystem::path(d->get<std::string>()).parent_path().filename().string();
    }
    bool named = false;
    if (!dir.empty()) {
        try {
            set_model(m, dir, "checkpointer.checkpoint_dir", o);
            named = true;
        } catch (const InputError&) {
        }
    }
    if (!named) set_model(m, model_from_component(comp), "model._component_", o);
    if (comp.find(".lora_") != std::string::npos || comp.find(".qlora_") != std::string::npos) map_lora(m, comp);
    else m.set("train.method", "full", "model._component_: " + comp);
    component(m, "checkpointer");
    const int64_t seq = whole(m, "tokenizer.max_seq_len");
    if (seq) m.set("train.seq_len", seq, "tokenizer.max_seq_len: " + std::to_string(seq));
    else if (!o.user_sets("train.seq_len")) assume_untruncated_seq_len(m);
    // The multi-dataset dev recipe sets packing on its dataloader (recipes/configs/dev/11B_lora_multi_dataset.yaml).
    const bool packed = flag(m, "dataset.packed") || flag(m, "dataloader.packed");
    m.set("train.packing", packed, packed ? "dataset.packed: true" : "dataset.packed: false (padded per batch)");
    if (const int64_t b = whole(m, "batch_size")) m.set("train.micro_batch", b, "batch_size: " + std::to_string(b));
    if (const int64_t ga = whole(m, "gradient_accumulation_steps"))
        m.set("train.gradient_accumulation", ga, "gradient_accumulation_steps: " + std::to_string(ga));
    if (const Json* e = m.take("epochs"); e && e->is_number()) m.set("data.epochs", e->get<double>(), "epochs: " + e->dump());
    if (const std::string opt = component(m, "optimizer"); !opt.empty()) {
        std::string note;
        m.set("train.optimizer", optimizer_from_component(opt, note), "optimizer._component_: " + opt);
        if (!note.empty()) m.note("train.optimizer: " + note);
    }
    if (flag(m, "optimizer_in_bwd")) m.set("train.optimizer_in_backward", true, "optimizer_in_bwd: true");
    if (const std::string loss = component(m, "loss"); !loss.empty())
        m.set("train.loss", loss.find("Chunked") != std::string::npos ? "chunked" : "standard", "loss._component_: " + loss);
    if (const Json* dt = m.take("dtype"); dt && dt->is_string()) {
        const std::string v = dt->get<std::string>();
        m.set("train.precision", v == "fp32" ? "fp32" : v, "dtype: " + v);
        m.set("train.weights", v == "fp32" ? "mixed" : "pure", "dtype: " + v + " (torchtune keeps parameters in it, no autocast)");
    }
    if (flag(m, "enable_activation_checkpointing")) m.set("train.activation_checkpointing", "full", "enable_activation_checkpointing: true");
    if (flag(m, "enable_activation_offloading")) m.set("offload.activations", "cpu", "enable_activation_offloading: true");
    if (flag(m, "compile")) m.set("train.compile", true, "compile: true");
    const Json* cpu_off = m.take("fsdp_cpu_offload");
    if (cpu_off) {
        // Only distributed recipes carry FSDP settings: they shard parameters, gradients and state (FSDP2 full shard).
        m.set("parallel.zero", 3, "fsdp_cpu_offload present (a distributed recipe: FSDP2 full shard)");
        if (cpu_off->is_boolean() && cpu_off->get<bool>()) m.set("offload.params", "cpu", "fsdp_cpu_offload: true");
    }
    m.set("train.framework", "torchtune", "a torchtune recipe");
}

}  // namespace ftb::import
