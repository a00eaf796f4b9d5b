// An accelerate config (`accelerate config` writes it; `accelerate launch --config_file`): machines, processes,
// mixed precision, and the DeepSpeed or FSDP plugin settings. Field names: accelerate's
// commands/config/cluster.py (ClusterConfig) and utils/dataclasses.py (DeepSpeedPlugin, FullyShardedDataParallelPlugin).
#include <filesystem>

#include "ftbound/error.hpp"
#include "import/import_job.hpp"

namespace ftb::import {
namespace {

int positive_int(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    if (!v) return 0;
    if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > 1 << 20) m.fail(key, "expected a positive whole number");
    return static_cast<int>(v->get<int64_t>());
}

// deepspeed_config.deepspeed_config_file: accelerate opens it as given, relative to where `accelerate launch` runs
// (utils/dataclasses.py DeepSpeedPlugin -> HfDeepSpeedConfig(hf_ds_config), os.path.exists); a config read from
// elsewhere names it relative to its own folder as often. A --deepspeed FILE replaces it (the reader of the training
// config maps that one).
void map_deepspeed_file(Mapper& m, const std::string& named, const std::string& config_path, const ImportOptions& o) {
    if (!o.deepspeed.empty()) {
        m.note("deepspeed_config.deepspeed_config_file: '" + named + "' replaced by --deepspeed " + o.deepspeed);
        return;
    }
    std::error_code ec;
    std::filesystem::path p = named;
    if (!std::filesystem::is_regular_file(p, ec)) p = std::filesystem::path(config_path).parent_path() / named;
    if (!std::filesystem::is_regular_file(p, ec))
        m.fail("deepspeed_config.deepspeed_config_file",
               "'" + p.string() + "' not found: give the DeepSpeed JSON with --deepspeed FILE");
    map_deepspeed(m, load_document(p.string()), p.string());
}

}  // namespace

void map_accelerate(Mapper& parent, const ImportOptions& options) {
    const std::string& path = options.accelerate;
    const Json doc = load_document(path);
    if (!doc.is_object()) throw InputError(path, "", "an accelerate config must be a mapping");
    Mapper m(doc, path, "accelerate");
    const int machines = positive_int(m, "num_machines");
    const int processes = positive_int(m, "num_processes");   // all processes, every machine
    if (processes > 0) {
        const int nodes = machines > 0 ? machines : 1;
        if (processes % nodes != 0) m.fail("num_processes", std::to_string(processes) + " processes do not split over " +
                                                                std::to_string(nodes) + " machines");
        parent.gpus_per_node = processes / nodes;
        parent.nodes = nodes;
        parent.gpus_from = std::filesystem::path(path).filename().string() + " (num_processes " + std::to_string(processes) +
                           ", num_machines " + std::to_string(nodes) + ")";
    }
    if (const Json* mp = m.take("mixed_precision"); mp && mp->is_string()) {
        const std::string v = mp->get<std::string>();
        if (v == "bf16" || v == "fp16" || v == "fp8") m.set("train.precision", v, "mixed_precision: " + v);
        else if (v == "no") m.set("train.precision", "fp32", "mixed_precision: no");
    }
    const Json* dt = m.take("distributed_type");
    const std::string type = dt ? show_value(*dt) : "";
    if (type == "DEEPSPEED") {
        if (const Json* file = m.take("deepspeed_config.deepspeed_config_file"); file && file->is_string())
            map_deepspeed_file(m, file->get<std::string>(), path, options);
        if (const Json* z = m.take("deepspeed_config.zero_stage"); z && z->is_number_integer())
            m.set("parallel.zero", z->get<int>(), "deepspeed_config.zero_stage: " + z->dump());
        for (const char* which : {"optimizer", "param"}) {
            const std::string key = std::string("deepspeed_config.offload_") + which + "_device";
            if (const Json* d = m.take(key); d && d->is_string() && d->get<std::string>() != "none")
                m.set(std::string(which) == "optimizer" ? "offload.optimizer" : "offload.params", d->get<std::string>(),
                      key + ": " + d->get<std::string>());
        }
        if (const Json* ga = m.take("deepspeed_config.gradient_accumulation_steps"); ga && ga->is_number_integer())
            m.set("train.gradient_accumulation", ga->get<int64_t>(), "deepspeed_config.gradient_accumulation_steps");
        m.set("train.framework", "deepspeed", "distributed_type: DEEPSPEED");
    } else if (type == "FSDP") {
        // FULL_SHARD (1) shards parameters, gradients and optimizer state = ZeRO-3; SHARD_GRAD_OP (2) = ZeRO-2.
        const Json* s = m.take("fsdp_config.fsdp_sharding_strategy");
        const std::string strategy = s ? show_value(*s) : "FULL_SHARD";
        const int zero = (strategy == "SHARD_GRAD_OP" || strategy == "2") ? 2 : (strategy == "NO_SHARD" || strategy == "3") ? 0 : 3;
        m.set("parallel.zero", zero, "fsdp_config.fsdp_sharding_strategy: " + strategy);
        if (const Json* off = m.take("fsdp_config.fsdp_offload_params"); off && off->is_boolean() && off->get<bool>())
            m.set("offload.params", "cpu", "fsdp_config.fsdp_offload_params: true");
        if (const Json* ac = m.take("fsdp_config.fsdp_activation_checkpointing"); ac && ac->is_boolean() && ac->get<bool>())
            m.set("train.activation_checkpointing", "full", "fsdp_config.fsdp_activation_checkpointing: true");
    }
    parent.merge(m.partial(), path);
}

}  // namespace ftb::import
