// Fields the Hugging Face Trainer family shares (HF TrainingArguments, and axolotl and LLaMA-Factory, which pass
// most of theirs through to it), each reader giving its own field names.
#pragma once
#include "import/import_job.hpp"

namespace ftb::import {

struct TrainerFieldNames {
    const char* micro_batch;        // per_device_train_batch_size | micro_batch_size
    const char* accumulation;       // gradient_accumulation_steps
    const char* epochs;             // num_train_epochs | num_epochs
    const char* optimizer;          // optim | optimizer
    const char* checkpointing;      // gradient_checkpointing ("" = the reader decides)
};

// Batch, accumulation, epochs, optimizer, precision (bf16/fp16), recompute, torch_compile, FSDP, DeepSpeed
// (a path relative to the config, or an inline mapping; ImportOptions.deepspeed replaces it).
void map_trainer_fields(Mapper& m, const ImportOptions& o, const TrainerFieldNames& n);
// A positive whole number at `key`, or 0 when absent.
int64_t whole(Mapper& m, const std::string& key);
bool flag(Mapper& m, const std::string& key);
// An integer as PyYAML reads it: a number, or a YAML 1.1 string of digits with underscores ("500_000"); 0 if neither.
int64_t yaml11_int(const Json& v);

}  // namespace ftb::import
