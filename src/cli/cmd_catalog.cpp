// `ftbound catalog [models|gpus|cpus|systems|networks|links|frameworks] [--json]`
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "ftbound/error.hpp"
#include "report/table.hpp"
#include "spec/catalog.hpp"
#include "spec/job_file.hpp"
#include "system/fabric_summary.hpp"
#include "system/nic_share.hpp"

namespace ftb::cli {
namespace {

const std::vector<std::string> kSections = {"models", "gpus", "cpus", "systems", "networks", "links", "frameworks"};

const char* component_kind(ComponentKind k) {
    switch (k) {
        case ComponentKind::gpu: return "gpu";
        case ComponentKind::cpu_socket: return "cpu_socket";
        case ComponentKind::pcie_switch: return "pcie_switch";
        case ComponentKind::nic: return "nic";
        case ComponentKind::nvswitch: return "nvswitch";
        case ComponentKind::nvme: return "nvme";
    }
    return "?";
}

int count_of(const SystemSpec& x, ComponentKind kind) {
    return static_cast<int>(std::count_if(x.components.begin(), x.components.end(),
                                          [&](const Component& c) { return c.kind == kind; }));
}

// The whole node at full load: every compute device at its TDP plus everything else (node_base_power_w).
double max_node_w(const SystemSpec& x) { return x.devices_per_node * x.device.tdp_w + x.node_base_power_w; }

nlohmann::ordered_json topology_json(const SystemSpec& x) {
    nlohmann::ordered_json comps = nlohmann::ordered_json::array(), links = nlohmann::ordered_json::array();
    for (const Component& c : x.components) comps.push_back({{"id", c.id}, {"kind", component_kind(c.kind)}, {"socket", c.socket}});
    for (const TopologyLink& l : x.links)
        links.push_back({{"a", x.components[l.a].id}, {"b", x.components[l.b].id}, {"link", l.link.name},
                         {"bandwidth_GBps", l.link.bandwidth_GBps}, {"achievable_fraction", l.link.achievable_fraction},
                         {"latency_us", l.link.latency_us}});
    return {{"components", comps}, {"links", links}};
}

// The buyer's view: GPUs, fabric, NICs, supplies, power; `--json` adds the full topology and sources.
std::string systems_section(const Catalog& cat, nlohmann::ordered_json& js) {
    const InputSite site{"catalog", "systems"};
    TextTable t({"name", "compute", "GPU fabric", "ring GB/s", "NICs", "power supplies", "max W"},
                {false, false, false, true, false, false, true});
    for (const auto& n : cat.names("systems")) {
        const SystemSpec x = cat.system(n, site);
        const FabricSummary fabric = summarize_fabric(x);
        const int nics = count_of(x, ComponentKind::nic);
        const NicShare share = nic_share(x, x.cpu_only ? 0 : x.devices_per_node);
        const std::string compute = x.cpu_only ? fmt::format("CPU only: {} x {}", x.sockets, x.host_cpu.name)
                                               : fmt::format("{} x {}", x.devices_per_node, x.device.name);
        const std::string nic_text =
            nics == 0 ? "-"
                      : x.cpu_only ? fmt::format("{} x {}", nics, x.inter_node.name)
                                   : fmt::format("{} x {} ({:.0f} GB/s per GPU)", nics, x.inter_node.name, share.per_gpu_GBps);
        t.add({n, compute, fabric.text(), fabric.ring_bus_GBps > 0 ? fmt::format("{:.0f}", fabric.ring_bus_GBps) : "-", nic_text,
               fmt::format("{} x {:.0f} W {}", x.power.count, x.power.watts_each, x.power.redundancy),
               fmt::format("{:.0f}", max_node_w(x))});
        js.push_back({{"name", n}, {"vendor", x.vendor}, {"form_factor", x.form_factor}, {"cpu_only", x.cpu_only},
                      {"gpu", x.cpu_only ? "" : x.device.name}, {"gpus_per_node", x.devices_per_node}, {"cpu", x.host_cpu.name},
                      {"sockets", x.sockets}, {"host_memory_bytes", x.host_memory_bytes},
                      {"fabric", {{"kind", to_string(fabric.kind)}, {"link", fabric.link}, {"per_gpu_GBps", fabric.per_gpu_GBps},
                                  {"per_pair_GBps", fabric.per_pair_GBps}, {"ring_bus_GBps", fabric.ring_bus_GBps}}},
                      {"nics", {{"count", nics}, {"network", x.inter_node.name}, {"line_GBps", x.inter_node.bandwidth_GBps},
                                {"per_gpu_GBps", x.cpu_only ? 0.0 : share.per_gpu_GBps}}},
                      {"power", {{"psu_count", x.power.count}, {"psu_watts", x.power.watts_each},
                                 {"redundancy", x.power.redundancy}, {"node_base_power_w", x.node_base_power_w},
                                 {"max_node_w", max_node_w(x)}}},
                      {"storage", {{"nvme_drives", count_of(x, ComponentKind::nvme)}, {"read_GBps", x.local_storage.read_GBps},
                                   {"write_GBps", x.local_storage.write_GBps}}},
                      {"topology", topology_json(x)}, {"sources", x.sources}});
    }
    return t.str("  ");
}

std::string section_text(const Catalog& cat, const std::string& s, nlohmann::ordered_json& js) {
    const InputSite site{"catalog", s};
    std::string out = fmt::format("{} ({} in {})\n", s, cat.names(s).size(), cat.data_dir());
    if (s == "models") {
        TextTable t({"name", "family", "parameters", "layers", "hidden", "vocab"}, {false, false, true, true, true, true});
        for (const auto& n : cat.names(s)) {
            ModelSpec m = cat.model(n, site);
            t.add({n, m.architecture, fmt_count(double(m.total_params())), std::to_string(m.num_layers()),
                   std::to_string(m.hidden), std::to_string(m.vocab)});
            js.push_back({{"name", n}, {"architecture", m.architecture}, {"params", m.total_params()}});
        }
        return out + t.str("  ");
    }
    if (s == "gpus" || s == "cpus") {
        TextTable t({"name", "memory", "bandwidth GB/s", "bf16 TFLOP/s", "fp8 TFLOP/s", "fp32 TFLOP/s", "TDP W"},
                    {false, true, true, true, true, true, true});
        for (const auto& n : cat.names(s)) {
            DeviceSpec d = s == "gpus" ? cat.gpu(n, site) : cat.cpu(n, site);
            t.add({n, s == "gpus" ? fmt_bytes(d.memory_bytes) : std::to_string(d.cores) + " cores",
                   fmt::format("{:.0f}", d.memory_bandwidth_GBps), fmt::format("{:.1f}", d.peak_tflops.bf16),
                   fmt::format("{:.1f}", d.peak_tflops.fp8), fmt::format("{:.1f}", d.peak_tflops.fp32),
                   fmt::format("{:.0f}", d.tdp_w)});
            js.push_back({{"name", n}, {"memory_bytes", d.memory_bytes}, {"memory_bandwidth_GBps", d.memory_bandwidth_GBps},
                          {"tflops", {{"fp32", d.peak_tflops.fp32}, {"tf32", d.peak_tflops.tf32}, {"fp16", d.peak_tflops.fp16},
                                      {"bf16", d.peak_tflops.bf16}, {"fp8", d.peak_tflops.fp8}}},
                          {"tdp_w", d.tdp_w}});
        }
        return out + t.str("  ");
    }
    if (s == "systems") return out + systems_section(cat, js);
    if (s == "networks" || s == "links") {
        TextTable t({"name", "GB/s per direction", "latency us", "achievable"}, {false, true, true, true});
        for (const auto& n : cat.names(s)) {
            LinkSpec l = s == "links" ? cat.link(n, site)
                                      : [&] { NetworkSpec w = cat.network(n, site); return LinkSpec{w.name, w.bandwidth_GBps, w.latency_us, w.achievable_fraction}; }();
            t.add({n, fmt::format("{:.1f}", l.bandwidth_GBps), fmt::format("{:.2f}", l.latency_us),
                   fmt_percent(l.achievable_fraction, 0)});
            js.push_back({{"name", n}, {"bandwidth_GBps", l.bandwidth_GBps}, {"latency_us", l.latency_us},
                          {"achievable_fraction", l.achievable_fraction}});
        }
        return out + t.str("  ");
    }
    TextTable t({"name", "weights", "attention", "loss", "optimizer"});
    for (const auto& n : cat.names(s)) {
        FrameworkProfile f = load_framework(n, "catalog", "frameworks");
        t.add({n, f.default_weights, f.default_attention, f.default_loss, f.default_optimizer});
        js.push_back({{"name", n}, {"weights", f.default_weights}, {"attention", f.default_attention},
                      {"loss", f.default_loss}, {"optimizer", f.default_optimizer}});
    }
    return out + t.str("  ");
}

const Register reg{Command{
    "catalog", "what the built-in catalog holds (models, gpus, cpus, systems, networks, links, frameworks)",
    [](CLI::App& sub) -> std::function<int()> {
        auto section = std::make_shared<std::string>();
        auto json = std::make_shared<bool>(false);
        sub.add_option("section", *section, "models | gpus | cpus | systems | networks | links | frameworks");
        sub.add_flag("--json", *json, "print one JSON document");
        return [section, json] {
            const Catalog& cat = Catalog::instance();
            std::vector<std::string> wanted = kSections;
            if (!section->empty()) {
                if (std::find(kSections.begin(), kSections.end(), *section) == kSections.end()) {
                    std::string hint = did_you_mean(*section, kSections);
                    throw InputError("command line", "section",
                                     "unknown section '" + *section + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                         "; one of models, gpus, cpus, systems, networks, links, frameworks");
                }
                wanted = {*section};
            }
            nlohmann::ordered_json doc;
            std::string text;
            for (const auto& s : wanted) {
                nlohmann::ordered_json arr = nlohmann::ordered_json::array();
                text += section_text(cat, s, arr) + "\n";
                doc[s] = arr;
            }
            std::cout << (*json ? doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : text);
            return 0;
        };
    }}};

}  // namespace
}  // namespace ftb::cli
