// LLaMA-Factory v1 YAML (examples/v1/train_*/*.yaml, run by `llamafactory-cli v1 train`): a string `model` with
// plugin mappings. Field names and defaults from src/llamafactory/v1 at commit ff6d4d12 (the corpus's commit):
//   config/training_args.py: micro_batch_size 1 (l.33), global_batch_size None = dp x micro (l.37), cutoff_len 2048
//     (l.41), num_train_epochs 3 (l.49), bf16 True (l.61), batching_strategy normal (l.65),
//     enable_activation_checkpointing True (l.73), dist_config (l.77), cp_size 1 (l.85), optim_config;
//   config/model_args.py: flash_attn (sdpa | flash_attention_2 | eager), peft_config, quant_config;
//   plugins/model_plugins/peft.py: lora r 8 (l.38), target_modules "all" (l.44, every linear but the head),
//     lora_alpha, lora_dropout, export_dir (an export, not training); freeze freeze_trainable_layers 2 (l.72);
//   plugins/model_plugins/quantization.py: quantization_bit 4 | 8 (bitsandbytes, nf4 by default, l.41-44);
//   config/arg_utils.py BatchingStrategy: normal, dynamic_batching (padded per batch), padding_free,
//     dynamic_padding_free (plugins/trainer_plugins/batching.py l.123: samples packed into one sequence);
//   plugins/trainer_plugins/distributed/fsdp2.py: fully_shard (= ZeRO-3), offload_params (l.189).
#include "import/trainer_fields.hpp"

namespace ftb::import {
namespace {

std::string plugin_name(Mapper& m, const std::string& key) {
    const Json* n = m.take(key + ".name");
    return n && n->is_string() ? n->get<std::string>() : "";
}

void map_peft(Mapper& m) {
    const std::string peft = plugin_name(m, "peft_config");
    const int64_t qbit = whole(m, "quant_config.quantization_bit");
    plugin_name(m, "quant_config");
    if (qbit && peft != "lora") m.fail("quant_config.quantization_bit", "a quantised base trains only with peft_config.name: lora");
    if (peft == "lora") {
        if (qbit == 4 || qbit == 8) {
            m.set("train.method", "qlora", "peft_config.name: lora, quant_config.quantization_bit: " + std::to_string(qbit));
            m.set("train.qlora.bits", qbit, "quant_config.quantization_bit: " + std::to_string(qbit));
        } else {
            m.set("train.method", "lora", "peft_config.name: lora");
        }
        const int64_t r = whole(m, "peft_config.r");
        m.set("train.lora.rank", r ? r : 8, r ? "peft_config.r: " + std::to_string(r) : "no peft_config.r (default 8)");
        if (const Json* a = m.take("peft_config.lora_alpha"); a && a->is_number())
            m.set("train.lora.alpha", a->get<double>(), "peft_config.lora_alpha: " + a->dump());
        if (const Json* d = m.take("peft_config.lora_dropout"); d && d->is_number())
            m.set("train.lora.dropout", d->get<double>(), "peft_config.lora_dropout: " + d->dump());
        const Json* t = m.take("peft_config.target_modules");
        if (!t || (t->is_string() && t->get<std::string>() == "all")) {
            m.set("train.lora.targets", "all-linear", "peft_config.target_modules: all");
        } else if (t->is_array()) {
            OJson list = OJson::array();
            for (const auto& x : *t) list.push_back(show_value(x));
            m.set("train.lora.targets", list, "peft_config.target_modules");
        } else {
            m.fail("peft_config.target_modules", "expected all or a list of module names");
        }
    } else if (peft == "freeze") {
        const int64_t n = whole(m, "peft_config.freeze_trainable_layers");
        m.set("train.method", "freeze", "peft_config.name: freeze");
        m.set("train.freeze.trainable_layers", n ? n : 2,
              n ? "peft_config.freeze_trainable_layers: " + std::to_string(n) : "no freeze_trainable_layers (default 2)");
    } else if (peft.empty()) {
        m.set("train.method", "full", "no peft_config (full fine-tuning)");
    } else {
        m.fail("peft_config.name", "'" + peft + "' is not lora or freeze");
    }
}

void map_distribution(Mapper& m) {
    const std::string dist = plugin_name(m, "dist_config");
    if (dist == "fsdp2" || dist == "fsdpturbo") {
        m.set("parallel.zero", 3, "dist_config.name: " + dist + " (fully_shard: parameters, gradients and states)");
        if (flag(m, "dist_config.offload_params")) m.set("offload.params", "cpu", "dist_config.offload_params: true");
    } else if (!dist.empty()) {
        m.fail("dist_config.name", "'" + dist + "' is not fsdp2: give --set parallel.zero=N for its sharding");
    }
    if (const int64_t cp = whole(m, "cp_size"); cp > 1) m.set("parallel.cp", cp, "cp_size: " + std::to_string(cp));
}

}  // namespace

void read_llama_factory_v1(Mapper& m, const ImportOptions& o) {
    const Json& src = m.source();
    if (src.contains("peft_config") && src["peft_config"].is_object() && src["peft_config"].contains("export_dir"))
        m.fail("peft_config.export_dir", "a LoRA merge/export config (llamafactory-cli v1 export), not a training job: "
                                         "ftbound plans fine-tuning jobs");
    const Json* model = m.take("model");
    set_model(m, model->get<std::string>(), "model", o);
    map_peft(m);
    const int64_t cutoff = whole(m, "cutoff_len");
    m.set("train.seq_len", cutoff ? cutoff : 2048, cutoff ? "cutoff_len: " + std::to_string(cutoff) : "no cutoff_len (default 2048)");
    const Json* bs = m.take("batching_strategy");
    const std::string batching = bs ? show_value(*bs) : "normal";
    const bool packed = batching == "padding_free" || batching == "dynamic_padding_free";
    m.set("train.packing", packed, "batching_strategy: " + batching + (packed ? " (samples packed)" : " (padded per batch)"));
    if (!packed) m.note("train.avg_seq_len: not in the config; sequences count as full cutoff_len tokens (an upper bound; "
                        "give --set train.avg_seq_len=N)");
    const int64_t micro = whole(m, "micro_batch_size");
    m.set("train.micro_batch", micro ? micro : 1, micro ? "micro_batch_size: " + std::to_string(micro) : "no micro_batch_size (default 1)");
    if (const int64_t g = whole(m, "global_batch_size")) m.set("train.global_batch", g, "global_batch_size: " + std::to_string(g));
    if (const Json* e = m.take("num_train_epochs"); e && e->is_number()) m.set("data.epochs", e->get<double>(), "num_train_epochs: " + e->dump());
    const Json* bf = m.take("bf16");
    const bool bf16 = !bf || (bf->is_boolean() && bf->get<bool>());
    m.set("train.precision", bf16 ? "bf16" : "fp32", bf ? "bf16: " + bf->dump() : "no bf16 (default true)");
    const Json* ac = m.take("enable_activation_checkpointing");
    const bool ckpt = !ac || (ac->is_boolean() && ac->get<bool>());
    m.set("train.activation_checkpointing", ckpt ? "full" : "none",
          ac ? "enable_activation_checkpointing: " + ac->dump() : "activation checkpointing (default on)");
    if (const Json* fa = m.take("flash_attn"); fa && fa->is_string()) {
        const std::string v = fa->get<std::string>();
        m.set("train.attention", v == "flash_attention_2" ? "flash" : v == "eager" ? "eager" : "sdpa", "flash_attn: " + v);
    }
    if (const std::string opt = plugin_name(m, "optim_config"); !opt.empty()) {
        std::string note;
        m.set("train.optimizer", optimizer_from_hf(opt, note), "optim_config.name: " + opt);
        if (!note.empty()) m.note("train.optimizer: " + note);
    }
    map_distribution(m);
    m.set("train.framework", "llama-factory", "a LLaMA-Factory v1 config");
}

}  // namespace ftb::import
