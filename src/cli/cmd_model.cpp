// `ftbound model NAME|CONFIG.json [--json]`: architecture summary and exact parameter counts.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "report/table.hpp"
#include "spec/catalog.hpp"

namespace ftb::cli {
namespace {

const char* ssm_kind_name(SsmKind k) {
    switch (k) {
        case SsmKind::mamba1: return "mamba1";
        case SsmKind::mamba2: return "mamba2";
        case SsmKind::gated_delta: return "gated-deltanet";
        case SsmKind::short_conv: return "short-conv";
        case SsmKind::kda: return "kda";
        case SsmKind::none: break;
    }
    return "none";
}

std::string layer_kind(const LayerSpec& l) {
    std::string k = l.cross_attention ? "decoder" : (l.is_encoder ? "encoder" : "block");
    if (l.experts > 0) k += fmt::format(" moe {}x top{}", l.experts, l.experts_per_token);
    if (l.sliding_window > 0) k += fmt::format(" window {}", l.sliding_window);
    // A hybrid model's blocks by mixer: state-space (with attention beside it: Falcon-H1), attention alone, or none.
    if (l.ssm == SsmKind::short_conv)
        k += fmt::format(" short-conv channels {} kernel {}", l.ssm_inner, l.ssm_conv);
    else if (l.ssm != SsmKind::none)
        k += fmt::format(" {}{} d_inner {} state {}", l.has_attention() ? "attention + " : "",
                         ssm_kind_name(l.ssm), l.ssm_inner, l.ssm_state);
    else if (!l.has_attention()) k += " mlp";
    if (l.ssm != SsmKind::none && l.ffn_intermediate == 0) k += " no-ffn";
    return k;
}

// The block that shows the model's attention and FFN shapes: the first with both (every block of a transformer),
// else the first with attention, else the first.
const LayerSpec& shape_block(const ModelSpec& m) {
    for (const auto& l : m.layers)
        if (l.has_attention() && l.ffn_intermediate > 0) return l;
    for (const auto& l : m.layers)
        if (l.has_attention()) return l;
    return m.layers.front();
}

const Register reg{Command{
    "model", "architecture summary and exact parameter counts of a catalog model or a config.json",
    [](CLI::App& sub) -> std::function<int()> {
        auto name = std::make_shared<std::string>();
        auto json = std::make_shared<bool>(false);
        sub.add_option("model", *name, "catalog name (HuggingFace id) or path to a config.json")->required();
        sub.add_flag("--json", *json, "print one JSON document");
        return [name, json] {
            const ModelSpec m = Catalog::instance().model(*name, {"command line", "model"});
            std::string out;
            if (*json) {
                nlohmann::ordered_json j;
                j["name"] = m.name;
                j["architecture"] = m.architecture;
                j["params"]["total"] = m.total_params();
                j["params"]["embedding"] = m.embedding_params();
                j["params"]["lm_head"] = m.lm_head_params();
                j["params"]["vision"] = m.vision_params;
                j["params"]["idle"] = m.idle_params();
                j["params"]["active_per_token"] = m.active_params();
                auto per = nlohmann::ordered_json::array();
                for (const auto& l : m.layers) per.push_back(l.params());
                j["params"]["per_layer"] = per;
                j["layers"] = m.num_layers();
                j["hidden_size"] = m.hidden;
                j["vocab_size"] = m.vocab;
                const LayerSpec& l = shape_block(m);
                j["attention_heads"] = l.heads;
                j["kv_heads"] = l.kv_heads;
                j["head_dim"] = l.head_dim;
                j["intermediate_size"] = l.ffn_intermediate;
                j["ffn"] = l.ffn_kind == FfnKind::gated ? "gated" : "plain";
                j["tied_embeddings"] = m.tie_word_embeddings;
                j["max_position_embeddings"] = m.max_positions;
                if (m.is_moe()) {
                    j["experts"] = l.experts;
                    j["experts_per_token"] = l.experts_per_token;
                }
                out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            } else {
                const LayerSpec& l = shape_block(m);
                out += fmt::format("{} ({})\n", m.name, m.architecture);
                out += fmt::format("  hidden {}, {} layers, {} heads ({} key/value, head_dim {}), FFN {} {}, vocab {}{}\n",
                                   m.hidden, m.num_layers(), l.heads, l.kv_heads, l.head_dim,
                                   l.ffn_kind == FfnKind::gated ? "gated" : "plain", l.ffn_intermediate, m.vocab,
                                   m.tie_word_embeddings ? ", tied embeddings" : "");
                TextTable t({"part", "parameters", "exact"}, {false, true, true});
                t.add({"embedding (+ positions)", fmt_count(double(m.embedding_params())), std::to_string(m.embedding_params())});
                // Group consecutive identical blocks.
                size_t i = 0;
                while (i < m.layers.size()) {
                    size_t j = i;
                    while (j + 1 < m.layers.size() && m.layers[j + 1].params() == m.layers[i].params() &&
                           layer_kind(m.layers[j + 1]) == layer_kind(m.layers[i]))
                        ++j;
                    const double each = double(m.layers[i].params());
                    t.add({fmt::format("layers {}-{} ({}), each", i, j, layer_kind(m.layers[i])), fmt_count(each),
                           std::to_string(m.layers[i].params())});
                    i = j + 1;
                }
                if (m.vision_params > 0)
                    t.add({"vision encoder and projector", fmt_count(double(m.vision_params)), std::to_string(m.vision_params)});
                if (m.idle_params() > 0)
                    t.add({"held, never run (MTP layers)", fmt_count(double(m.idle_params())), std::to_string(m.idle_params())});
                const int64_t rest = m.total_params() - m.embedding_params() - m.lm_head_params() - m.vision_params -
                                     m.idle_params() -
                                     [&] { int64_t s = 0; for (auto& x : m.layers) s += x.params(); return s; }();
                t.add({"final norms and other", fmt_count(double(rest)), std::to_string(rest)});
                t.add({m.tie_word_embeddings ? "lm_head (tied to the embedding)" : "lm_head",
                       fmt_count(double(m.lm_head_params())), std::to_string(m.lm_head_params())});
                t.add_rule();
                t.add({"total", fmt_count(double(m.total_params())), std::to_string(m.total_params())});
                if (m.is_moe()) t.add({"active per token", fmt_count(double(m.active_params())), std::to_string(m.active_params())});
                out += t.str("  ");
            }
            std::cout << out;
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
