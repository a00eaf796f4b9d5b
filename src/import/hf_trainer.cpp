// HF TrainingArguments as JSON or YAML (TrainingArguments.to_json_string(), an HfArgumentParser args file of
// run_clm.py or TRL's SFTConfig): the Trainer fields (trainer_fields.cpp) plus what those scripts add:
// model_name_or_path, attn_implementation (ModelArguments), block_size (run_clm.py), max_seq_length /
// max_length and packing (TRL SFTConfig). A DeepSpeed JSON comes from `deepspeed` or --deepspeed.
#include "import/trainer_fields.hpp"

namespace ftb::import {

namespace {

// What a script's config class changes from TrainingArguments' defaults (0 / false = TrainingArguments' own).
struct ScriptDefaults {
    int64_t seq_len = 0;
    bool gradient_checkpointing = false;
    bool bf16_unless_fp16 = false;
    const char* who = "";
};

void read_trainer_args(Mapper& m, const ImportOptions& o, const ScriptDefaults& d) {
    const Json* model = m.take("model_name_or_path");
    if (model && model->is_string()) set_model(m, model->get<std::string>(), "model_name_or_path", o);
    else if (!o.user_sets("model"))
        m.fail("model_name_or_path", "TrainingArguments do not name the model: give --set model=NAME");
    int64_t seq = 0;
    std::string seq_from;
    for (const char* k : {"max_seq_length", "max_length", "block_size"})
        if (const int64_t v = whole(m, k); v && !seq) seq = v, seq_from = k;
    if (seq) m.set("train.seq_len", seq, seq_from + ": " + std::to_string(seq));
    else if (d.seq_len) m.set("train.seq_len", d.seq_len, std::string("no max_length (") + d.who + " default " + std::to_string(d.seq_len) + ")");
    else if (!o.user_sets("train.seq_len"))
        m.fail("max_seq_length", "no sequence length (max_seq_length, max_length or block_size): give --set train.seq_len=N");
    const bool packing = flag(m, "packing");
    m.set("train.packing", packing, packing ? "packing: true" : "no packing (sequences padded per batch)");
    const Json& src = m.source();
    if (d.gradient_checkpointing && !src.contains("gradient_checkpointing"))
        m.set("train.activation_checkpointing", "full", std::string("no gradient_checkpointing (") + d.who + " default true)");
    if (d.bf16_unless_fp16 && !src.contains("bf16") && !(src.contains("fp16") && src["fp16"] == true))
        m.set("train.precision", "bf16", std::string("no bf16 or fp16 (") + d.who + ": bf16 unless fp16)");
    map_trainer_fields(m, o, {"per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "optim",
                              "gradient_checkpointing"});
    if (const Json* a = m.take("attn_implementation"); a && a->is_string()) {
        const std::string v = a->get<std::string>();
        m.set("train.attention", v == "flash_attention_2" || v == "flash_attention_3" ? "flash" : v == "eager" ? "eager" : "sdpa",
              "attn_implementation: " + v);
    }
    if (!m.has_set("train.framework")) m.set("train.framework", "hf", "HF TrainingArguments");
}

}  // namespace

void read_hf_trainer(Mapper& m, const ImportOptions& o) { read_trainer_args(m, o, {}); }

// `trl sft --config FILE` (examples/cli_configs/example_config.yaml): TRL's ScriptArguments (dataset_name) with an
// SFTConfig, whose defaults differ from TrainingArguments' (trl/trainer/sft_config.py l.205-206 max_length 1024,
// l.225-226 packing False; trl/trainer/base_config.py l.61 gradient_checkpointing True, l.105 bf16 = not fp16).
void read_trl_sft(Mapper& m, const ImportOptions& o) {
    read_trainer_args(m, o, {1024, true, true, "TRL SFTConfig"});
    if (!m.has_set("train.micro_batch"))
        m.set("train.micro_batch", 8, "no per_device_train_batch_size (TrainingArguments default 8)");
}

}  // namespace ftb::import
