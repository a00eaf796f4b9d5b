#include "import/import_job.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <toml++/toml.h>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"

namespace fs = std::filesystem;

namespace ftb::import {
namespace {

Json toml_to_json(const toml::node& n) {
    if (auto t = n.as_table()) {
        Json o = Json::object();
        for (const auto& [k, v] : *t) o[std::string(k.str())] = toml_to_json(v);
        return o;
    }
    if (auto a = n.as_array()) {
        Json arr = Json::array();
        for (const auto& v : *a) arr.push_back(toml_to_json(v));
        return arr;
    }
    if (auto v = n.as_string()) return v->get();
    if (auto v = n.as_integer()) return v->get();
    if (auto v = n.as_floating_point()) return v->get();
    if (auto v = n.as_boolean()) return v->get();
    // Dates and times: kept as text.
    auto text = [](const auto& x) {
        std::ostringstream os;
        os << x;
        return os.str();
    };
    if (auto v = n.as_date()) return text(v->get());
    if (auto v = n.as_time()) return text(v->get());
    if (auto v = n.as_date_time()) return text(v->get());
    return nullptr;
}

Json load_source(const std::string& path) {
    if (fs::path(path).extension() != ".toml") return load_document(path);
    return parse_toml_text(read_text_file(path, "config"), path);
}

bool has_component(const Json& doc) {
    for (const auto& [k, v] : doc.items())
        if (v.is_object() && v.contains("_component_")) return true;
    return false;
}

std::string detect(const Json& doc, const std::string& path) {
    if (fs::path(path).extension() == ".toml" || (doc.contains("training") && doc.contains("parallelism")))
        return "torchtitan";
    if (doc.contains("base_model")) return "axolotl";
    if (doc.contains("model_name_or_path") && (doc.contains("finetuning_type") || doc.contains("stage")))
        return "llama-factory";
    // LLaMA-Factory v1 (examples/v1/): `model` is the HF id itself, the rest plugin mappings (peft_config, ...).
    if (doc.contains("model") && doc["model"].is_string() &&
        (doc.contains("model_class") || doc.contains("peft_config") || doc.contains("dist_config") ||
         doc.contains("micro_batch_size") || doc.contains("cutoff_len")))
        return "llama-factory-v1";
    if (has_component(doc)) return "torchtune";
    if (doc.contains("per_device_train_batch_size") || doc.contains("deepspeed") || doc.contains("num_train_epochs"))
        return "hf";
    // `trl sft --config`: TRL's ScriptArguments name the data set (trl/scripts/utils.py dataset_name).
    if (doc.contains("model_name_or_path") && doc.contains("dataset_name")) return "trl";
    // A LLaMA-Factory file without a stage is an inference, merge or export config (llamafactory-cli chat/export).
    if (doc.contains("model_name_or_path"))
        throw InputError(path, "finetuning_type", "missing, and no stage or per_device_train_batch_size: not a training "
                                                  "config ftbound reads (an inference, merge or export config?): give "
                                                  "finetuning_type (LLaMA-Factory) or per_device_train_batch_size (HF)");
    throw InputError(path, "base_model", "missing: not a config ftbound can import: expected an axolotl YAML (base_model), "
                                         "a LLaMA-Factory YAML (model_name_or_path + finetuning_type), a torchtune recipe "
                                         "(_component_ fields), HF TrainingArguments (per_device_train_batch_size) or a "
                                         "torchtitan TOML");
}

void set_path(OJson& root, const std::string& dotted, const OJson& value) {
    OJson* node = &root;
    std::stringstream ss(dotted);
    std::string part;
    std::vector<std::string> parts;
    while (std::getline(ss, part, '.')) parts.push_back(part);
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        OJson& next = (*node)[parts[i]];
        if (!next.is_object()) next = OJson::object();
        node = &next;
    }
    (*node)[parts.back()] = value;
}

const OJson* get_path(const OJson& root, const std::string& dotted) {
    const OJson* node = &root;
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
        if (!node->is_object() || !node->contains(part)) return nullptr;
        node = &(*node)[part];
    }
    return node;
}

// The reference's key order, so the written job reads like docs/job-file.md.
OJson ordered(const OJson& job) {
    OJson out = OJson::object();
    for (const char* k : {"model", "train", "parallel", "offload", "hardware", "data", "ops"})
        if (job.contains(k)) out[k] = job[k];
    return out;
}

void emit(YAML::Emitter& e, const OJson& v) {
    if (v.is_object()) {
        e << YAML::BeginMap;
        for (const auto& [k, x] : v.items()) {
            e << YAML::Key << k << YAML::Value;
            emit(e, x);
        }
        e << YAML::EndMap;
    } else if (v.is_array()) {
        e << YAML::Flow << YAML::BeginSeq;
        for (const auto& x : v) emit(e, x);
        e << YAML::EndSeq;
    } else if (v.is_string()) {
        e << v.get<std::string>();
    } else if (v.is_boolean()) {
        e << (v.get<bool>() ? "true" : "false");
    } else if (v.is_number_integer()) {
        e << v.get<int64_t>();
    } else if (v.is_number()) {
        e << v.dump();
    } else {
        e << YAML::Null;
    }
}

}  // namespace

bool ImportOptions::user_sets(const std::string& dotted) const {
    for (const auto& o : overrides) {
        const std::string key = o.substr(0, o.find('='));
        if (key == dotted || key.rfind(dotted + ".", 0) == 0 || dotted.rfind(key + ".", 0) == 0) return true;
    }
    return false;
}

std::string show_value(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

Mapper::Mapper(const Json& source, std::string file, std::string format) : source_(source), file_(std::move(file)) {
    result_.format = std::move(format);
    result_.job = OJson::object();
}

const Json* Mapper::take(const std::string& dotted) {
    taken_.insert(dotted);
    const Json* node = &source_;
    std::stringstream ss(dotted);
    std::string part;
    while (std::getline(ss, part, '.')) {
        if (!node->is_object() || !node->contains(part)) return nullptr;
        node = &(*node)[part];
    }
    return node->is_null() ? nullptr : node;
}

void Mapper::set(const std::string& job_path, const OJson& value, const std::string& from) {
    set_path(result_.job, job_path, value);
    result_.mapped.push_back(from + " -> " + job_path + ": " + (value.is_string() ? value.get<std::string>() : value.dump()));
}

void Mapper::assume(const std::string& job_path, const OJson& value, const std::string& why) {
    set_path(result_.job, job_path, value);
    result_.assumed.push_back(job_path + ": " + (value.is_string() ? value.get<std::string>() : value.dump()) + " (" + why + ")");
}

bool Mapper::has_set(const std::string& job_path) const { return get_path(result_.job, job_path) != nullptr; }

const OJson* Mapper::job_value(const std::string& job_path) const { return get_path(result_.job, job_path); }

void Mapper::fail(const std::string& field, const std::string& reason) const { throw InputError(file_, field, reason); }

void Mapper::collect_unused(const Json& node, const std::string& path) {
    if (!path.empty() && taken_.count(path)) return;
    if (node.is_object() && !node.empty()) {
        for (const auto& [k, v] : node.items()) collect_unused(v, path.empty() ? k : path + "." + k);
        return;
    }
    if (node.is_null() || path.empty()) return;
    result_.unused.push_back(path);
}

static void leaf_paths(const OJson& node, const std::string& path, std::vector<std::pair<std::string, OJson>>& out) {
    if (node.is_object()) {
        for (const auto& [k, v] : node.items()) leaf_paths(v, path.empty() ? k : path + "." + k, out);
        return;
    }
    out.emplace_back(path, node);
}

void Mapper::merge(const ImportResult& sub, const std::string& sub_file) {
    std::vector<std::pair<std::string, OJson>> leaves;
    leaf_paths(sub.job, "", leaves);
    for (const auto& [path, value] : leaves)
        if (!has_set(path)) set_path(result_.job, path, value);
    const std::string name = fs::path(sub_file).filename().string();
    for (const auto& l : sub.mapped) result_.mapped.push_back(name + ": " + l);
    for (const auto& l : sub.assumed) result_.assumed.push_back(l);
    for (const auto& u : sub.unused) result_.unused.push_back(name + ": " + u);
}

ImportResult Mapper::partial() {
    collect_unused(source_, "");
    return result_;
}

int64_t Mapper::degree_product() const {
    int64_t product = 1;
    for (const char* key : {"parallel.tp", "parallel.pp", "parallel.cp"})
        if (const OJson* d = job_value(key); d && d->is_number_integer() && d->get<int64_t>() > 1)
            product *= std::min<int64_t>(d->get<int64_t>(), 1 << 16);   // a degree the job reader refuses anyway
    return product;
}

ImportResult Mapper::finish(const ImportOptions& o) {
    if (!o.hardware.empty()) {
        set("hardware.system", o.hardware, "--hardware");
        if (nodes > 1) set("hardware.nodes", nodes, gpus_from);
    } else if (!o.user_sets("hardware")) {
        // The configs name no hardware: a reference node, said plainly, for the user to replace. Without a GPU count,
        // as many GPUs as the parallel degrees the config sets need (tensor x pipeline x context parallel).
        const int64_t model_parallel = degree_product();
        if (gpus_per_node == 0 && model_parallel > 1 && model_parallel <= (1 << 20)) {
            gpus_per_node = static_cast<int>(model_parallel % 8 == 0 ? 8 : model_parallel);
            nodes = static_cast<int>(model_parallel / gpus_per_node);
            gpus_from = "the fewest GPUs the config's parallel degrees need (tp x pp x cp = " +
                        std::to_string(model_parallel) + ", 8 per node)";
        }
        const int per_node = gpus_per_node > 0 ? gpus_per_node : 1;
        const std::string why = gpus_per_node > 0 ? "GPUs from " + gpus_from + "; the GPU is not in the config: give --hardware SYSTEM"
                                                  : "the config names no hardware: give --hardware SYSTEM";
        assume("hardware.gpu", "h100-sxm", why);
        assume("hardware.gpus_per_node", per_node, why);
        if (per_node > 1) assume("hardware.intra_node", "nvlink4", "H100 SXM GPUs in one node are joined by NVLink 4");
        if (nodes > 1) {
            set("hardware.nodes", nodes, gpus_from);
            assume("hardware.inter_node", "ib-ndr-400", "the fabric between nodes is not in the config");
        }
    }
    collect_unused(source_, "");
    result_.job = ordered(result_.job);
    return result_;
}

std::string optimizer_from_hf(const std::string& optim, std::string& note) {
    // transformers OptimizerNames (training_args.py) and bitsandbytes' optimizers, by their state per parameter.
    // The paged AdamWs keep their states in CUDA unified memory (bitsandbytes optim/optimizer.py
    // get_state_buffer: F.get_paged), which the job file plans apart from device memory.
    static const std::vector<std::pair<std::string, std::string>> table = {
        {"adamw_torch", "adamw"},          {"adamw_torch_fused", "adamw"},     {"adamw_hf", "adamw"},
        {"adamw_apex_fused", "adamw"},     {"adamw_torch_xla", "adamw"},       {"adamw_torch_npu_fused", "adamw"},
        {"adamw", "adamw"},                {"adam", "adam"},                   {"adafactor", "adafactor"},
        {"adamw_bnb_8bit", "adamw_8bit"},  {"adamw_8bit", "adamw_8bit"},       {"paged_adamw_8bit", "paged_adamw_8bit"},
        {"sgd", "sgd"},                    {"lion_32bit", "lion"},             {"paged_lion_32bit", "lion"},
        {"paged_adamw_32bit", "paged_adamw"}, {"paged_adamw", "paged_adamw"},
    };
    for (const auto& [from, to] : table)
        if (from == optim) {
            if (optim == "paged_lion_32bit")
                note = "paged Lion planned as Lion (4 bytes of state per parameter, kept in device memory): an upper bound";
            return to;
        }
    if (optim == "lion_8bit" || optim == "paged_lion_8bit") {
        note = "8-bit Lion planned as Lion (4 bytes of state per parameter): an upper bound";
        return "lion";
    }
    note = "optimizer '" + optim + "' is not one ftbound models; planned as AdamW (8 bytes of state per parameter)";
    return "adamw";
}

void set_model(Mapper& m, const std::string& name, const std::string& from, const ImportOptions& o) {
    if (o.user_sets("model")) {
        m.note(from + ": " + name + " is not looked up: --set model replaces it");
        return;
    }
    // Resolve now, so an unknown model is reported against the source config's field.
    try {
        Catalog::instance().model(name, {m.file(), from});
    } catch (const InputError& e) {
        throw InputError(e.file(), e.field(), e.reason() + "; give --set model=NAME (a catalog name or an HF config.json)");
    }
    m.set("model", name, from + ": " + name);
}

Json parse_toml_text(const std::string& text, const std::string& path) {
    try {
        return toml_to_json(toml::parse(text, path));
    } catch (const toml::parse_error& e) {
        throw InputError(path, "", "malformed TOML at line " + std::to_string(e.source().begin.line) + ": " +
                                       std::string(e.description()));
    }
}

ImportResult import_config(const std::string& path, const ImportOptions& options) {
    return import_document(load_source(path), path, options);
}

ImportResult import_document(const Json& doc, const std::string& path, const ImportOptions& options) {
    if (!doc.is_object()) throw InputError(path, "", "the config must be a mapping");
    const std::string format = detect(doc, path);
    Mapper m(doc, path, format);
    if (format == "axolotl") read_axolotl(m, options);
    else if (format == "llama-factory") read_llama_factory(m, options);
    else if (format == "llama-factory-v1") read_llama_factory_v1(m, options);
    else if (format == "torchtune") read_torchtune(m, options);
    else if (format == "torchtitan") read_torchtitan(m, options);
    else if (format == "trl") read_trl_sft(m, options);
    else read_hf_trainer(m, options);
    if (!options.accelerate.empty()) map_accelerate(m, options);
    return m.finish(options);
}

std::string import_report(const ImportResult& r, const std::string& path) {
    std::string out = "import: " + path + " read as a " + r.format + " config\n";
    for (const auto& l : r.mapped) out += "  " + l + "\n";
    for (const auto& l : r.assumed) out += "assumed: " + l + "\n";
    if (!r.unused.empty()) {
        // TrainingArguments dumps hold ~100 fields: name the first ones, count the rest.
        constexpr size_t kShown = 24;
        std::string list;
        for (size_t i = 0; i < r.unused.size() && i < kShown; ++i) list += (list.empty() ? "" : ", ") + r.unused[i];
        if (r.unused.size() > kShown) list += " and " + std::to_string(r.unused.size() - kShown) + " more";
        out += "warning: " + path + ": not used (no effect ftbound models): " + list + "\n";
    }
    return out;
}

std::string job_yaml(const ImportResult& r, const std::string& path) {
    YAML::Emitter e;
    e << YAML::BeginDoc;
    emit(e, r.job);
    std::string out = "# Imported by `ftbound import` from " + fs::path(path).filename().string() + " (" + r.format +
                      "); check the assumptions it printed.\n";
    std::string body = e.c_str();
    if (body.rfind("---\n", 0) == 0) body = body.substr(4);
    return out + body + "\n";
}

}  // namespace ftb::import
