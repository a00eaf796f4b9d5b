#include "spec/framework_support.hpp"

#include "spec/catalog.hpp"

namespace ftb {
namespace {

// Each list entry must name one of `values` (by its job-file spelling, to_string).
template <typename E>
std::vector<E> read_choices(const Fields& f, const std::string& key, const std::vector<E>& values) {
    std::vector<E> out;
    std::vector<std::string> names;
    for (E v : values) names.emplace_back(to_string(v));
    for (const std::string& s : f.get_string_list(key)) {
        bool known = false;
        for (E v : values)
            if (s == to_string(v)) out.push_back(v), known = true;
        if (!known) {
            std::string list;
            for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
            f.fail(key, "'" + s + "' is not one of " + list);
        }
    }
    return out;
}

}  // namespace

FrameworkSupport read_framework_support(const Fields& f) {
    f.reject_unknown({"tensor_parallel", "pipeline", "context_parallel", "expert_parallel", "sequence_parallel", "zero",
                      "offload", "activation_checkpointing", "loss", "compile", "fp8", "lora", "qlora", "sources"});
    FrameworkSupport s;
    s.tensor_parallel = f.get_bool("tensor_parallel").value_or(s.tensor_parallel);
    if (f.has("pipeline"))
        s.pipeline = read_choices(f, "pipeline", std::vector<PipelineSchedule>{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                                                                               PipelineSchedule::interleaved});
    s.context_parallel = f.get_bool("context_parallel").value_or(s.context_parallel);
    s.expert_parallel = f.get_bool("expert_parallel").value_or(s.expert_parallel);
    s.sequence_parallel = f.get_bool("sequence_parallel").value_or(s.sequence_parallel);
    if (f.has("zero")) {
        const Json* z = f.raw("zero");
        if (!z->is_array()) f.fail("zero", "must be a list of ZeRO stages (0-3)");
        s.zero.clear();
        for (const Json& v : *z) {
            if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 3) f.fail("zero", "stages are 0, 1, 2 or 3");
            s.zero.push_back(v.get<int>());
        }
    }
    if (f.has("offload")) {
        s.offload_optimizer = s.offload_params = s.offload_activations = false;
        for (const std::string& o : f.get_string_list("offload")) {
            if (o == "optimizer") s.offload_optimizer = true;
            else if (o == "params") s.offload_params = true;
            else if (o == "activations") s.offload_activations = true;
            else f.fail("offload", "'" + o + "' is not one of optimizer, params, activations");
        }
    }
    if (f.has("activation_checkpointing"))
        s.activation_checkpointing = read_choices(f, "activation_checkpointing",
                                                  std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
    if (f.has("loss"))
        s.losses = read_choices(f, "loss", std::vector<LossImpl>{LossImpl::standard, LossImpl::fp32_upcast, LossImpl::chunked,
                                                                 LossImpl::fused});
    s.compile = f.get_bool("compile").value_or(s.compile);
    s.fp8 = f.get_bool("fp8").value_or(s.fp8);
    s.lora = f.get_bool("lora").value_or(s.lora);
    s.qlora = f.get_bool("qlora").value_or(s.qlora);
    s.sources = f.get_string_list("sources");
    return s;
}

FrameworkSupport load_framework_support(const std::string& framework) {
    // A profile without the section inherits its base's (data/frameworks: `base`); the chain is bounded as the
    // profile reader bounds it.
    std::string name = framework;
    for (int depth = 0; depth < 8; ++depth) {
        const std::string path = Catalog::instance().path_of("frameworks", name);
        const Json doc = load_document(path);
        Fields root(doc, path, "");
        if (root.has("supports")) return read_framework_support(root.child("supports"));
        const std::optional<std::string> base = root.get_string("base");
        if (!base) return {};
        name = *base;
    }
    return {};
}

}  // namespace ftb
