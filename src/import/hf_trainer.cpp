// HF TrainingArguments as JSON or YAML (TrainingArguments.to_json_string(), an HfArgumentParser args file of
// run_clm.py or TRL's SFTConfig): the Trainer fields (trainer_fields.cpp) plus what those scripts add:
// model_name_or_path, attn_implementation (ModelArguments), block_size (run_clm.py), max_seq_length /
// max_length and packing (TRL SFTConfig). A DeepSpeed JSON comes from `deepspeed` or --deepspeed.
#include "import/trainer_fields.hpp"

namespace ftb::import {

void read_hf_trainer(Mapper& m, const ImportOptions& o) {
    const Json* model = m.take("model_name_or_path");
    if (model && model->is_string()) set_model(m, model->get<std::string>(), "model_name_or_path");
    else if (!o.user_sets("model"))
        m.fail("model_name_or_path", "TrainingArguments do not name the model: give --set model=NAME");
    int64_t seq = 0;
    std::string seq_from;
    for (const char* k : {"max_seq_length", "max_length", "block_size"})
        if (const int64_t v = whole(m, k); v && !seq) seq = v, seq_from = k;
    if (seq) m.set("train.seq_len", seq, seq_from + ": " + std::to_string(seq));
    else if (!o.user_sets("train.seq_len"))
        m.fail("max_seq_length", "no sequence length (max_seq_length, max_length or block_size): give --set train.seq_len=N");
    const bool packing = flag(m, "packing");
    m.set("train.packing", packing, packing ? "packing: true" : "no packing (sequences padded per batch)");
    map_trainer_fields(m, o, {"per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs", "optim",
                              "gradient_checkpointing"});
    if (const Json* a = m.take("attn_implementation"); a && a->is_string()) {
        const std::string v = a->get<std::string>();
        m.set("train.attention", v == "flash_attention_2" || v == "flash_attention_3" ? "flash" : v == "eager" ? "eager" : "sdpa",
              "attn_implementation: " + v);
    }
    if (!m.has_set("train.framework")) m.set("train.framework", "hf", "HF TrainingArguments");
}

}  // namespace ftb::import
