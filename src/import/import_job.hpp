// `ftbound import`: another tool's training config -> an ftbound job (docs/import.md).
// One reader per source format (axolotl.cpp, llama_factory.cpp, torchtune.cpp, hf_trainer.cpp with
// deepspeed_config.cpp and accelerate_config.cpp, torchtitan.cpp); this file holds what they share: the
// record of which field became what, what was assumed, and what was left unused.
#pragma once
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "spec/document.hpp"

namespace ftb::import {

using OJson = nlohmann::ordered_json;

struct ImportOptions {
    std::string deepspeed;     // a DeepSpeed JSON beside an HF TrainingArguments file (else its `deepspeed` field)
    std::string accelerate;    // an accelerate config (num_machines, num_processes, DeepSpeed/FSDP settings)
    std::string hardware;      // a catalog system for the job; empty = the config's or an assumed one
    std::vector<std::string> overrides;     // the caller's --set KEY=VALUE: what it sets is not required or assumed
    bool user_sets(const std::string& dotted) const;
};

struct ImportResult {
    std::string format;                  // "axolotl", "llama-factory", "llama-factory-v1", "torchtune", "hf", "torchtitan"
    OJson job;                           // the ftbound job, keys in the reference's order
    std::vector<std::string> mapped;     // "source.field: value -> train.key: value"
    std::vector<std::string> assumed;    // "train.key: value (why)"
    std::vector<std::string> unused;     // source fields with a value that nothing read
};

// Reads `path` (YAML, JSON or TOML), recognises the tool, and maps it. Throws InputError.
ImportResult import_config(const std::string& path, const ImportOptions& options);
// The same for a document already read; `path` names it in errors (a .toml path is read as torchtitan's).
ImportResult import_document(const Json& doc, const std::string& path, const ImportOptions& options);
// TOML text -> the document tree (tables as mappings, dates as text). Throws InputError naming the line.
Json parse_toml_text(const std::string& text, const std::string& path);

// The mapping report for stderr: what became what, what was assumed, the unused fields as warnings.
std::string import_report(const ImportResult& r, const std::string& path);

// The job as YAML, with a comment naming the source.
std::string job_yaml(const ImportResult& r, const std::string& path);

// ---- shared by the format readers ----

// Records reads of one source document: every field a reader takes is marked used; what was not is reported.
class Mapper {
public:
    Mapper(const Json& source, std::string file, std::string format);

    // The value at a dotted path (nullptr when absent or null); marks it (and everything under it) used.
    const Json* take(const std::string& dotted);
    // Sets job[path] = value, recording where it came from.
    void set(const std::string& job_path, const OJson& value, const std::string& from);
    // Sets job[path] = value as an assumption, with the reason.
    void assume(const std::string& job_path, const OJson& value, const std::string& why);
    bool has_set(const std::string& job_path) const;
    const OJson* job_value(const std::string& job_path) const;
    void note(const std::string& text) { result_.assumed.push_back(text); }
    // Takes over what a reader of a second file (a DeepSpeed JSON, an accelerate config) mapped; `sub` sets
    // only keys this mapper has not set.
    void merge(const ImportResult& sub, const std::string& sub_file);
    // The fields of this source nothing read (for merge); the job is left as is.
    ImportResult partial();
    [[noreturn]] void fail(const std::string& field, const std::string& reason) const;
    const std::string& file() const { return file_; }
    const Json& source() const { return source_; }

    // Completes the job (hardware from the options, the config or an assumption) and lists the unused fields.
    ImportResult finish(const ImportOptions& options);

    // GPUs the config states (accelerate num_processes, torchtitan degrees): 0 = it does not say.
    int gpus_per_node = 0;
    int nodes = 0;
    std::string gpus_from;

private:
    void collect_unused(const Json& node, const std::string& path);
    // tp x pp x cp of the job so far (1 when none is set).
    int64_t degree_product() const;
    const Json& source_;
    std::string file_;
    std::set<std::string> taken_;
    ImportResult result_;
};

// Helpers the readers share.
std::string show_value(const Json& v);
// HF TrainingArguments `optim` (also axolotl's and LLaMA-Factory's `optimizer`/`optim`) -> train.optimizer.
std::string optimizer_from_hf(const std::string& optim, std::string& note);
// A DeepSpeed config (file or inline mapping): zero stage, offload, precision, batch fields.
void map_deepspeed(Mapper& m, const Json& ds, const std::string& where);
// The model name a config gives, checked against the catalog (a clear error when unknown), unless the caller's
// --set model=... replaces it (then the config's name is recorded, not resolved: it may be one ftbound lacks).
void set_model(Mapper& m, const std::string& name, const std::string& from, const ImportOptions& o);

// Format readers (one file each).
void read_axolotl(Mapper& m, const ImportOptions& o);
void read_llama_factory(Mapper& m, const ImportOptions& o);
void read_llama_factory_v1(Mapper& m, const ImportOptions& o);   // llamafactory-cli v1: a string `model` + plugins
void read_torchtune(Mapper& m, const ImportOptions& o);
void read_hf_trainer(Mapper& m, const ImportOptions& o);
void read_trl_sft(Mapper& m, const ImportOptions& o);   // `trl sft --config`: SFTConfig defaults
void read_torchtitan(Mapper& m, const ImportOptions& o);
// The accelerate config file options.accelerate: GPUs and nodes, DeepSpeed/FSDP settings, mixed precision. A
// DeepSpeed JSON given with --deepspeed (options.deepspeed) replaces the one its deepspeed_config_file names.
void map_accelerate(Mapper& m, const ImportOptions& options);

}  // namespace ftb::import
