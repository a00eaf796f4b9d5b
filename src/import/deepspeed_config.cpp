// A DeepSpeed config (the JSON an HF TrainingArguments, axolotl or LLaMA-Factory config points at, or an
// accelerate config's deepspeed_config_file). Field names: DeepSpeed's config documentation
// (deepspeed/runtime/zero/config.py, offload_config.py; "auto" values are filled by the HF integration).
#include "import/import_job.hpp"

namespace ftb::import {
namespace {

// "cpu" | "nvme" | "none" -> offload target, or "" when not given.
std::string device_of(Mapper& m, const std::string& key) {
    const Json* d = m.take(key);
    if (!d) return "";
    if (!d->is_string()) m.fail(key, "expected cpu, nvme or none");
    const std::string v = d->get<std::string>();
    if (v != "cpu" && v != "nvme" && v != "none") m.fail(key, "'" + v + "' is not cpu, nvme or none");
    return v;
}

bool enabled(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    // "auto" leaves it to the HF Trainer's own bf16/fp16 fields (the transformers DeepSpeed integration).
    return v && v->is_boolean() && v->get<bool>();
}

}  // namespace

void map_deepspeed(Mapper& parent, const Json& ds, const std::string& where) {
    if (!ds.is_object()) parent.fail("deepspeed", "the DeepSpeed config must be a mapping");
    Mapper m(ds, where, "deepspeed");
    if (const Json* stage = m.take("zero_optimization.stage")) {
        if (!stage->is_number_integer() || stage->get<int>() < 0 || stage->get<int>() > 3)
            m.fail("zero_optimization.stage", "expected 0, 1, 2 or 3");
        m.set("parallel.zero", stage->get<int>(), "zero_optimization.stage: " + show_value(*stage));
    }
    const std::string opt = device_of(m, "zero_optimization.offload_optimizer.device");
    if (!opt.empty() && opt != "none") m.set("offload.optimizer", opt, "zero_optimization.offload_optimizer.device: " + opt);
    if (const Json* legacy = m.take("zero_optimization.cpu_offload"); legacy && legacy->is_boolean() && legacy->get<bool>())
        m.set("offload.optimizer", "cpu", "zero_optimization.cpu_offload: true");
    const std::string par = device_of(m, "zero_optimization.offload_param.device");
    if (!par.empty() && par != "none") m.set("offload.params", par, "zero_optimization.offload_param.device: " + par);
    if (enabled(m, "bf16.enabled")) m.set("train.precision", "bf16", "bf16.enabled");
    else if (enabled(m, "fp16.enabled")) m.set("train.precision", "fp16", "fp16.enabled");
    if (const Json* mb = m.take("train_micro_batch_size_per_gpu"); mb && mb->is_number_integer())
        m.set("train.micro_batch", mb->get<int64_t>(), "train_micro_batch_size_per_gpu: " + mb->dump());
    if (const Json* ga = m.take("gradient_accumulation_steps"); ga && ga->is_number_integer())
        m.set("train.gradient_accumulation", ga->get<int64_t>(), "gradient_accumulation_steps: " + ga->dump());
    // train_batch_size = micro x accumulation x GPUs: only needed when accumulation is not given.
    if (const Json* tb = m.take("train_batch_size"); tb && tb->is_number_integer() && !m.has_set("train.gradient_accumulation"))
        m.set("train.global_batch", tb->get<int64_t>(), "train_batch_size: " + tb->dump());
    if (const Json* cpu = m.take("activation_checkpointing.cpu_checkpointing"); cpu && cpu->is_boolean() && cpu->get<bool>())
        m.set("offload.activations", "cpu", "activation_checkpointing.cpu_checkpointing: true");
    m.set("train.framework", "deepspeed", "a DeepSpeed config");
    parent.merge(m.partial(), where);
}

}  // namespace ftb::import
