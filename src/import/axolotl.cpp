// axolotl YAML (axolotl/utils/config/models/input/v0_4_1: AxolotlInputConfig; examples/*/qlora.yml, lora.yml):
// base_model, adapter (lora | qlora), load_in_4bit / load_in_8bit, lora_r, lora_alpha, lora_dropout,
// lora_target_modules / lora_target_linear, sequence_len, sample_packing, micro_batch_size,
// gradient_accumulation_steps, num_epochs, optimizer, bf16 (true | auto) / fp16, gradient_checkpointing,
// flash_attention / sdp_attention / xformers_attention, deepspeed, fsdp.
#include <algorithm>
#include <cctype>

#include "import/trainer_fields.hpp"

namespace ftb::import {
namespace {

// lora_target_modules given as one string: peft matches it as a regular expression against every module's full name
// (peft/tuners/tuners_utils.py check_target_module_exists: re.fullmatch when target_modules is a str). The leaf names
// it can match are read from each "(a|b|c)_proj" alternation or plain "name_proj" word. axolotl's vision-language
// examples restrict it to model.language_model's layers, which is where ftbound's adapters go; a pattern reaching the
// vision tower is refused.
OJson targets_from_pattern(Mapper& m, const std::string& pattern) {
    if (pattern.find("vision") != std::string::npos || pattern.find("visual") != std::string::npos)
        m.fail("lora_target_modules", "the pattern reaches the vision tower: ftbound plans adapters on the text "
                                      "model's blocks only");
    OJson names = OJson::array();
    for (size_t at = pattern.find("_proj"); at != std::string::npos; at = pattern.find("_proj", at + 5)) {
        if (at > 0 && pattern[at - 1] == ')') {
            const size_t open = pattern.rfind('(', at - 1);
            if (open == std::string::npos) continue;
            std::string group = pattern.substr(open + 1, at - 2 - open) + "|";
            for (size_t p = 0, bar; (bar = group.find('|', p)) != std::string::npos; p = bar + 1)
                if (bar > p) names.push_back(group.substr(p, bar - p) + "_proj");
        } else {
            size_t start = at;
            while (start > 0 && (std::isalnum(static_cast<unsigned char>(pattern[start - 1])) || pattern[start - 1] == '_'))
                --start;
            if (start < at) names.push_back(pattern.substr(start, at - start) + "_proj");
        }
    }
    if (names.empty())
        m.fail("lora_target_modules", "pattern '" + pattern + "' names no projection ftbound can read (write the module "
                                      "names as a list: [q_proj, v_proj, ...])");
    return names;
}

}  // namespace

namespace {

// FSDP2 (fsdp_version: 2) takes no `fsdp:` word list: its fsdp_config shards parameters, gradients and optimizer state
// with fully_shard (ZeRO-3); reshard_after_forward: false keeps the gathered parameters until the backward (ZeRO-2);
// offload_params: true keeps them on the CPU (src/axolotl/utils/schemas/config.py fsdp_version and fsdp_config;
// examples/gpt-oss/gpt-oss-120b-fft-fsdp2-offload.yaml).
void map_fsdp2(Mapper& m) {
    const Json* version = m.take("fsdp_version");
    if (!version || show_value(*version) != "2" || m.has_set("parallel.zero")) return;
    const Json* reshard = m.take("fsdp_config.reshard_after_forward");
    const bool keeps_gathered = reshard && reshard->is_boolean() && !reshard->get<bool>();
    m.set("parallel.zero", keeps_gathered ? 2 : 3,
          keeps_gathered ? "fsdp_version: 2, reshard_after_forward: false" : "fsdp_version: 2 (fully_shard)");
    if (const Json* off = m.take("fsdp_config.offload_params"); off && off->is_boolean() && off->get<bool>())
        m.set("offload.params", "cpu", "fsdp_config.offload_params: true");
}

// dp_shard_size: "Number of devices to shard across" (src/axolotl/utils/schemas/config.py); with dp_replicate_size and
// the tensor / context parallel sizes it gives the GPU count, 8 a node when it is a multiple of 8.
void map_device_count(Mapper& m) {
    const int64_t shard = whole(m, "dp_shard_size");
    if (shard < 1) return;
    const int64_t replicate = std::max<int64_t>(1, whole(m, "dp_replicate_size"));
    int64_t gpus = shard * replicate;
    for (const char* key : {"parallel.tp", "parallel.cp"})
        if (const OJson* d = m.job_value(key); d && d->is_number_integer() && d->get<int64_t>() > 1) gpus *= d->get<int64_t>();
    if (gpus > (1 << 20)) m.fail("dp_shard_size", "more than 2^20 GPUs");
    m.gpus_per_node = static_cast<int>(gpus % 8 == 0 ? 8 : gpus);
    m.nodes = static_cast<int>(gpus / m.gpus_per_node);
    m.gpus_from = "dp_shard_size: " + std::to_string(shard) + (replicate > 1 ? " x dp_replicate_size: " + std::to_string(replicate) : "");
}

}  // namespace

void read_axolotl(Mapper& m, const ImportOptions& o) {
    const Json* base = m.take("base_model");
    if (!base || !base->is_string()) m.fail("base_model", "missing: the model to fine-tune");
    set_model(m, base->get<std::string>(), "base_model", o);
    const Json* adapter = m.take("adapter");
    const bool in4 = flag(m, "load_in_4bit"), in8 = flag(m, "load_in_8bit");
    const std::string a = adapter ? show_value(*adapter) : "";
    if (a == "qlora" || ((a == "lora") && (in4 || in8))) {
        m.set("train.method", "qlora", "adapter: " + a + (in4 ? ", load_in_4bit: true" : in8 ? ", load_in_8bit: true" : ""));
        m.set("train.qlora.bits", in8 && !in4 ? 8 : 4, in8 && !in4 ? "load_in_8bit: true" : "load_in_4bit / adapter qlora");
    } else if (a == "lora") {
        m.set("train.method", "lora", "adapter: lora");
    } else if (!a.empty()) {
        m.fail("adapter", "'" + a + "' is not lora or qlora");
    } else {
        m.set("train.method", "full", "no adapter");
    }
    if (a == "lora" || a == "qlora") {
        if (const int64_t r = whole(m, "lora_r")) m.set("train.lora.rank", r, "lora_r: " + std::to_string(r));
        if (const Json* al = m.take("lora_alpha"); al && al->is_number()) m.set("train.lora.alpha", al->get<double>(), "lora_alpha: " + al->dump());
        if (const Json* d = m.take("lora_dropout"); d && d->is_number()) m.set("train.lora.dropout", d->get<double>(), "lora_dropout: " + d->dump());
        const Json* mods = m.take("lora_target_modules");
        if (flag(m, "lora_target_linear")) m.set("train.lora.targets", "all-linear", "lora_target_linear: true");
        else if (mods && mods->is_array() && !mods->empty()) m.set("train.lora.targets", OJson::parse(mods->dump()), "lora_target_modules");
        else if (mods && mods->is_string())
            m.set("train.lora.targets", targets_from_pattern(m, mods->get<std::string>()),
                  "lora_target_modules: '" + mods->get<std::string>() + "' (a regular expression over module names)");
        else m.set("train.lora.targets", "all-linear", "neither lora_target_modules nor lora_target_linear (axolotl then targets all linear layers)");
    }
    const Json* seq = m.take("sequence_len");
    const int64_t seq_len = seq ? yaml11_int(*seq) : 0;
    if (seq_len < 1) {
        if (!o.user_sets("train.seq_len"))
            m.fail("sequence_len", seq ? "expected a positive whole number, found " + show_value(*seq) : "missing: give --set train.seq_len=N");
    } else {
        m.set("train.seq_len", seq_len, "sequence_len: " + show_value(*seq));
    }
    // Sequence (context) parallelism splits each sequence over this many ranks (src/axolotl/utils/schemas/config.py
    // l.1107 context_parallel_size; sequence_parallel_degree is its deprecated name, l.1104).
    for (const char* k : {"context_parallel_size", "sequence_parallel_degree"})
        if (const int64_t cp = whole(m, k); cp > 1 && !m.has_set("parallel.cp"))
            m.set("parallel.cp", cp, std::string(k) + ": " + std::to_string(cp));
    const bool packing = flag(m, "sample_packing");
    m.set("train.packing", packing, std::string("sample_packing: ") + (packing ? "true" : "false"));
    if (!packing && !flag(m, "pad_to_sequence_len"))
        m.note("train.avg_seq_len: not in the config; sequences count as full seq_len tokens (an upper bound on memory; "
               "give --set train.avg_seq_len=N for the real average)");
    map_trainer_fields(m, o, {"micro_batch_size", "gradient_accumulation_steps", "num_epochs", "optimizer", "gradient_checkpointing"});
    map_fsdp2(m);
    if (o.hardware.empty() && !o.user_sets("hardware")) map_device_count(m);
    if (flag(m, "flash_attention")) m.set("train.attention", "flash", "flash_attention: true");
    else if (flag(m, "sdp_attention")) m.set("train.attention", "sdpa", "sdp_attention: true");
    else if (flag(m, "xformers_attention")) m.set("train.attention", "flash", "xformers_attention: true (memory-efficient kernel, like flash)");
    if (!m.has_set("train.framework")) m.set("train.framework", "axolotl", "an axolotl config");
}

}  // namespace ftb::import
