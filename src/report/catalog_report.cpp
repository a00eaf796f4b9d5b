#include "report/catalog_report.hpp"

#include <fmt/format.h>

#include "report/table.hpp"
#include "spec/job_file.hpp"

namespace ftb {

const std::vector<std::string>& catalog_sections() {
    static const std::vector<std::string> sections = {"models", "gpus", "cpus", "systems", "networks", "links",
                                                      "frameworks"};
    return sections;
}

std::string catalog_section(const Catalog& cat, const std::string& s, nlohmann::ordered_json& js) {
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
    if (s == "systems") {
        TextTable t({"name", "compute", "host", "host RAM", "power supplies"}, {false, false, false, true, false});
        for (const auto& n : cat.names(s)) {
            SystemSpec x = cat.system(n, site);
            std::string compute = x.cpu_only ? fmt::format("CPU only: {} x {}", x.sockets, x.host_cpu.name)
                                             : fmt::format("{} x {}", x.devices_per_node, x.device.name);
            t.add({n, compute, fmt::format("{} x {}", x.sockets, x.host_cpu.name), fmt_bytes(x.host_memory_bytes),
                   fmt::format("{} x {:.0f} W {}", x.power.count, x.power.watts_each, x.power.redundancy)});
            js.push_back({{"name", n}, {"cpu_only", x.cpu_only}, {"gpu", x.cpu_only ? "" : x.device.name},
                          {"gpus_per_node", x.devices_per_node}, {"cpu", x.host_cpu.name}, {"sockets", x.sockets},
                          {"host_memory_bytes", x.host_memory_bytes}});
        }
        return out + t.str("  ");
    }
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

nlohmann::ordered_json catalog_json(const Catalog& cat) {
    nlohmann::ordered_json doc;
    for (const auto& s : catalog_sections()) {
        nlohmann::ordered_json entries = nlohmann::ordered_json::array();
        catalog_section(cat, s, entries);
        doc[s] = entries;
    }
    return doc;
}

}  // namespace ftb
