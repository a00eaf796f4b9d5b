// LLaMA-Factory YAML (examples/train_lora/llama3_lora_sft.yaml, examples/train_qlora/*, examples/train_full/*).
// Field names and defaults: src/llamafactory/hparams/finetuning_args.py (finetuning_type "lora", lora_rank 8,
// lora_alpha = 2 x rank, lora_dropout 0, lora_target "all", oft_block_size 32, oft_rank 0, freeze_trainable_layers 2,
// pure_bf16),
// model_args.py (quantization_bit, flash_attn auto | disabled | sdpa | fa2, disable_gradient_checkpointing False:
// the model trains with gradient checkpointing unless disabled), data_args.py (cutoff_len 2048, packing); the
// rest are HF TrainingArguments.
#include <sstream>

#include "import/trainer_fields.hpp"
#include "spec/catalog.hpp"

namespace ftb::import {
namespace {

// lora_target ("all" or a comma-separated list) -> `key` (train.lora.targets or train.oft.targets); its text.
std::string map_targets(Mapper& m, const std::string& key) {
    const Json* t = m.take("lora_target");
    const std::string target = t ? show_value(*t) : "all";
    if (target == "all") {
        m.set(key, "all-linear", "lora_target: all");
        return target;
    }
    OJson list = OJson::array();
    std::stringstream ss(target);
    std::string item;
    while (std::getline(ss, item, ',')) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty()) list.push_back(item);
    }
    m.set(key, list, "lora_target: " + target);
    return target;
}

void map_lora(Mapper& m) {
    const int64_t rank = whole(m, "lora_rank");
    m.set("train.lora.rank", rank ? rank : 8, rank ? "lora_rank: " + std::to_string(rank) : "no lora_rank (LLaMA-Factory's default 8)");
    if (const Json* a = m.take("lora_alpha"); a && a->is_number()) m.set("train.lora.alpha", a->get<double>(), "lora_alpha: " + a->dump());
    if (const Json* d = m.take("lora_dropout"); d && d->is_number()) m.set("train.lora.dropout", d->get<double>(), "lora_dropout: " + d->dump());
    map_targets(m, "train.lora.targets");
}

// finetuning_type: oft. model/adapter.py _setup_lora_tuning (at ff6d4d12) builds PEFT's OFTConfig from r=oft_rank,
// oft_block_size, module_dropout and target_modules, the last from lora_target like LoRA's: oft_target is parsed
// (finetuning_args.py __post_init__) but read nowhere else. Defaults (OFTArguments): oft_rank 0, oft_block_size 32,
// oft_target "all", module_dropout 0. OFTConfig refuses both or neither of r and oft_block_size non-zero.
void map_oft(Mapper& m) {
    const Json* b = m.take("oft_block_size");
    const Json* r = m.take("oft_rank");
    if ((b && !b->is_number_integer()) || (r && !r->is_number_integer()))
        m.fail(b && !b->is_number_integer() ? "oft_block_size" : "oft_rank", "must be a whole number");
    const int64_t block = b ? b->get<int64_t>() : 32, rank = r ? r->get<int64_t>() : 0;
    if (block < 0 || rank < 0) m.fail(block < 0 ? "oft_block_size" : "oft_rank", "negative");
    if (block > 0 && rank > 0)
        m.fail("oft_rank", std::to_string(rank) + " with oft_block_size " + std::to_string(block) + (b ? "" : " (the default)") +
                               ": PEFT's OFTConfig takes one of the two (r x oft_block_size = in_features); set the other to 0");
    if (block == 0 && rank == 0) m.fail("oft_block_size", "0 with oft_rank 0: PEFT's OFTConfig needs one of the two");
    if (rank > 0) m.set("train.oft.rank", rank, "oft_rank: " + std::to_string(rank));
    else m.set("train.oft.block_size", block, b ? "oft_block_size: " + std::to_string(block) : "no oft_block_size (LLaMA-Factory's default 32)");
    const std::string target = map_targets(m, "train.oft.targets");
    if (const Json* t = m.take("oft_target"); t && show_value(*t) != target)
        m.note("oft_target: " + show_value(*t) + " is not what LLaMA-Factory adapts: its adapter.py takes lora_target (" +
               target + ") for OFT too");
    if (const Json* d = m.take("module_dropout"); d && d->is_number() && d->get<double>() > 0)
        m.note("module_dropout: " + d->dump() + " changes no cost: PEFT 0.18 builds the multiplicative dropout but its "
               "OFT Linear.forward never applies it (src/peft/tuners/oft/layer.py)");
}

// A vision-language checkpoint's freezes (finetuning_args.py FinetuningArguments: freeze_vision_tower True,
// freeze_multi_modal_projector True, freeze_language_model False). LoRA and freeze tuning leave the tower and projector
// frozen (the adapters go on the language model's linears); full tuning trains what these leave unfrozen.
void map_multimodal_freezes(Mapper& m, const std::string& model, const std::string& type) {
    auto setting = [&](const char* key, bool dflt) {
        const Json* v = m.take(key);
        return v && v->is_boolean() ? v->get<bool>() : dflt;
    };
    const bool tower = setting("freeze_vision_tower", true);
    const bool projector = setting("freeze_multi_modal_projector", true);
    const bool language = setting("freeze_language_model", false);
    if (!Catalog::instance().model(model, {m.file(), "model_name_or_path"}).encoder.present()) return;
    if (language)
        m.fail("freeze_language_model", "true: only the vision tower or projector would train; ftbound plans the text "
                                        "model's training (full, LoRA or freeze of its blocks)");
    if (type != "full") return;
    if (!tower && projector)
        m.fail("freeze_multi_modal_projector", "true with freeze_vision_tower: false (the tower trains, its projector "
                                               "not) is not a split ftbound plans (train.encoder: trained | projector | "
                                               "frozen)");
    const std::string what = tower ? (projector ? "frozen" : "projector") : "trained";
    m.set("train.encoder", what, std::string("freeze_vision_tower: ") + (tower ? "true" : "false") +
                                     ", freeze_multi_modal_projector: " + (projector ? "true" : "false") +
                                     " (LLaMA-Factory's defaults: true, true)");
}

}  // namespace

void read_llama_factory(Mapper& m, const ImportOptions& o) {
    const Json* model = m.take("model_name_or_path");
    if (!model || !model->is_string()) m.fail("model_name_or_path", "missing: the model to fine-tune");
    set_model(m, model->get<std::string>(), "model_name_or_path", o);
    const Json* stage = m.take("stage");
    const std::string st = stage ? show_value(*stage) : "sft";
    if (st != "sft" && st != "pt")
        m.note("stage " + st + ": planned as the policy model's training alone (a reference or reward model is not counted)");
    const Json* ft = m.take("finetuning_type");
    const std::string type = ft ? show_value(*ft) : "lora";
    const int64_t qbit = whole(m, "quantization_bit");
    if (type == "lora" || type == "oft") {
        // Adapters on a base quantised by bitsandbytes: qlora / qoft.
        if (qbit == 4 || qbit == 8) {
            m.set("train.method", "q" + type, "finetuning_type: " + type + ", quantization_bit: " + std::to_string(qbit));
            m.set("train.qlora.bits", qbit, "quantization_bit: " + std::to_string(qbit));
        } else {
            m.set("train.method", type, "finetuning_type: " + type);
        }
        if (type == "lora") map_lora(m);
        else map_oft(m);
    } else if (type == "freeze") {
        m.set("train.method", "freeze", "finetuning_type: freeze");
        const int64_t n = whole(m, "freeze_trainable_layers");
        m.set("train.freeze.trainable_layers", n ? n : 2, n ? "freeze_trainable_layers" : "no freeze_trainable_layers (default 2)");
    } else if (type == "full") {
        m.set("train.method", "full", "finetuning_type: full");
    } else {
        m.fail("finetuning_type", "'" + type + "' is not lora, oft, freeze or full");
    }
    map_multimodal_freezes(m, model->get<std::string>(), type);
    const int64_t cutoff = whole(m, "cutoff_len");
    m.set("train.seq_len", cutoff ? cutoff : 2048, cutoff ? "cutoff_len: " + std::to_string(cutoff) : "no cutoff_len (LLaMA-Factory's default 2048)");
    const bool packing = flag(m, "packing") || flag(m, "neat_packing");
    m.set("train.packing", packing, packing ? "packing: true" : "no packing (sequences padded per batch)");
    if (!packing) m.note("train.avg_seq_len: not in the config; sequences count as full cutoff_len tokens (an upper bound; "
                         "give --set train.avg_seq_len=N)");
    map_trainer_fields(m, o, {"per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "optim", ""});
    if (flag(m, "pure_bf16")) {
        m.set("train.precision", "bf16", "pure_bf16: true");
        m.set("train.weights", "pure", "pure_bf16: true");
    }
    const bool no_ckpt = flag(m, "disable_gradient_checkpointing");
    m.set("train.activation_checkpointing", no_ckpt ? "none" : "full",
          no_ckpt ? "disable_gradient_checkpointing: true" : "gradient checkpointing (on unless disable_gradient_checkpointing)");
    if (const Json* fa = m.take("flash_attn"); fa && fa->is_string()) {
        const std::string v = fa->get<std::string>();
        if (v == "fa2") m.set("train.attention", "flash", "flash_attn: fa2");
        else if (v == "sdpa") m.set("train.attention", "sdpa", "flash_attn: sdpa");
        else if (v == "disabled") m.set("train.attention", "eager", "flash_attn: disabled");
    }
    if (flag(m, "use_unsloth")) m.set("train.framework", "unsloth", "use_unsloth: true");
    if (!m.has_set("train.framework")) m.set("train.framework", "llama-factory", "a LLaMA-Factory config");
}

}  // namespace ftb::import
