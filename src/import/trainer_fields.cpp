// Names and meanings: transformers TrainingArguments (training_args.py): per_device_train_batch_size,
// gradient_accumulation_steps, num_train_epochs, optim, bf16, fp16, gradient_checkpointing, torch_compile,
// fsdp ("full_shard", "shard_grad_op", "offload", "auto_wrap"), fsdp_config, deepspeed.
#include "import/trainer_fields.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>

namespace ftb::import {

int64_t yaml11_int(const Json& v) {
    if (v.is_number_integer()) return v.get<int64_t>();
    if (!v.is_string()) return 0;
    // PyYAML (YAML 1.1, which axolotl, LLaMA-Factory and torchtune load with) reads 500_000 as the integer 500000.
    const std::string s = v.get<std::string>();
    std::string digits;
    for (char c : s) {
        if (c == '_') continue;
        if (!std::isdigit(static_cast<unsigned char>(c))) return 0;
        digits += c;
    }
    if (digits.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || digits.size() > 15) return 0;
    return std::stoll(digits);
}

int64_t whole(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    if (!v) return 0;
    if (v->is_number_float()) {   // 3.0 as YAML writes it; never cast a value beyond int64
        const double d = v->get<double>();
        if (d >= 1 && d <= 1e15 && d == std::floor(d)) return static_cast<int64_t>(d);
        m.fail(key, "expected a positive whole number, found " + show_value(*v));
    }
    if (!v->is_number_integer() || v->get<int64_t>() < 1) m.fail(key, "expected a positive whole number, found " + show_value(*v));
    return v->get<int64_t>();
}

bool flag(Mapper& m, const std::string& key) {
    const Json* v = m.take(key);
    if (!v) return false;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_string()) return v->get<std::string>() == "auto" || v->get<std::string>() == "true";   // axolotl's bf16: auto
    return false;
}

namespace {

void map_fsdp(Mapper& m) {
    const Json* f = m.take("fsdp");
    if (!f) return;
    std::string words = f->is_array() ? "" : show_value(*f);
    if (f->is_array())
        for (const auto& w : *f) words += show_value(w) + " ";
    if (words.empty() || words == "false") return;
    const int zero = words.find("shard_grad_op") != std::string::npos ? 2 : 3;
    m.set("parallel.zero", zero, "fsdp: " + words);
    if (words.find("offload") != std::string::npos) m.set("offload.params", "cpu", "fsdp: offload");
    if (const Json* ac = m.take("fsdp_config.activation_checkpointing"); ac && ac->is_boolean() && ac->get<bool>())
        m.set("train.activation_checkpointing", "full", "fsdp_config.activation_checkpointing: true");
    if (const Json* off = m.take("fsdp_config.fsdp_offload_params"); off && off->is_boolean() && off->get<bool>())
        m.set("offload.params", "cpu", "fsdp_config.fsdp_offload_params: true");
}

void map_deepspeed_field(Mapper& m, const ImportOptions& o) {
    const Json* ds = m.take("deepspeed");
    if (!o.deepspeed.empty()) {
        map_deepspeed(m, load_document(o.deepspeed), o.deepspeed);
        return;
    }
    if (!ds) return;
    if (ds->is_object()) {
        map_deepspeed(m, *ds, m.file() + ": deepspeed");
        return;
    }
    if (!ds->is_string()) m.fail("deepspeed", "expected a path to a DeepSpeed JSON or a mapping");
    const std::filesystem::path p = std::filesystem::path(m.file()).parent_path() / ds->get<std::string>();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec))
        m.fail("deepspeed", "'" + p.string() + "' not found: give the DeepSpeed JSON with --deepspeed FILE");
    map_deepspeed(m, load_document(p.string()), p.string());
}

}  // namespace

void map_trainer_fields(Mapper& m, const ImportOptions& o, const TrainerFieldNames& n) {
    if (const int64_t mb = whole(m, n.micro_batch)) m.set("train.micro_batch", mb, std::string(n.micro_batch) + ": " + std::to_string(mb));
    if (const int64_t ga = whole(m, n.accumulation))
        m.set("train.gradient_accumulation", ga, std::string(n.accumulation) + ": " + std::to_string(ga));
    if (const Json* e = m.take(n.epochs); e && e->is_number()) m.set("data.epochs", e->get<double>(), std::string(n.epochs) + ": " + e->dump());
    if (const Json* opt = m.take(n.optimizer); opt && opt->is_string()) {
        std::string note;
        const std::string to = optimizer_from_hf(opt->get<std::string>(), note);
        m.set("train.optimizer", to, std::string(n.optimizer) + ": " + opt->get<std::string>());
        if (!note.empty()) m.note("train.optimizer: " + note);
    }
    // The Trainer trains in fp32 unless bf16 or fp16 is set (TrainingArguments: both default False).
    if (flag(m, "bf16")) m.set("train.precision", "bf16", "bf16");
    else if (flag(m, "fp16")) m.set("train.precision", "fp16", "fp16");

    if (*n.checkpointing && flag(m, n.checkpointing))
        m.set("train.activation_checkpointing", "full", std::string(n.checkpointing) + ": true");
    if (flag(m, "torch_compile")) m.set("train.compile", true, "torch_compile: true");
    map_fsdp(m);
    map_deepspeed_field(m, o);
    if (!m.has_set("train.precision")) {
        // Neither bf16 nor fp16: the Trainer trains in fp32, its matmuls in TF32 when tf32 is set.
        const bool tf32 = flag(m, "tf32");
        m.set("train.precision", tf32 ? "tf32" : "fp32", tf32 ? "tf32: true, neither bf16 nor fp16" : "neither bf16 nor fp16 (the Trainer then trains in fp32)");
    }
}

}  // namespace ftb::import
