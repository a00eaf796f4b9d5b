// Printers of a ProbeReport: JSON (CONTRACT.md keys), text tables, and a system file for the planner.
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ftbound/units.hpp"
#include "probe/probe.hpp"
#include "probe/sysfs.hpp"

namespace ftb::probe {
namespace {

using nlohmann::json;

json value_or_null(const std::optional<Measurement>& m) {
    return m && m->valid() ? json(m->median()) : json(nullptr);
}
json value_or_null(const Measurement& m) { return m.valid() ? json(m.median()) : json(nullptr); }

void add_samples(json& samples, const std::string& key, const std::optional<Measurement>& m) {
    if (m && m->valid()) samples[key] = m->samples;
}

std::string pci_id(uint16_t v) { return fmt::format("{:04x}", v); }

json gpu_json(const GpuInfo& g, json& samples) {
    json j;
    j["index"] = g.index;
    j["name"] = g.name;
    std::string cat = catalog_gpu_name(g.name, g.memory_bytes);
    j["catalog_name"] = cat.empty() ? json(nullptr) : json(cat);
    j["pci_address"] = g.pci_address;
    j["numa_node"] = g.numa_node;
    j["memory_bytes"] = g.memory_bytes;
    j["pcie"] = {{"gen", g.pcie_gen}, {"width", g.pcie_width}, {"max_gen", g.pcie_max_gen}, {"max_width", g.pcie_max_width}};
    j["h2d_GBps"] = value_or_null(g.h2d_GBps);
    j["d2h_GBps"] = value_or_null(g.d2h_GBps);
    j["h2d_pageable_GBps"] = value_or_null(g.h2d_pageable_GBps);
    j["d2h_pageable_GBps"] = value_or_null(g.d2h_pageable_GBps);
    j["hbm_GBps"] = value_or_null(g.hbm_GBps);
    j["h2d_latency_us"] = value_or_null(g.h2d_latency_us);
    j["tflops"] = {{"fp32", value_or_null(g.tflops.fp32)}, {"tf32", value_or_null(g.tflops.tf32)},
                   {"bf16", value_or_null(g.tflops.bf16)}, {"fp16", value_or_null(g.tflops.fp16)},
                   {"fp8", value_or_null(g.tflops.fp8)}};
    json shapes = json::object();
    for (const auto& [shape, m] : g.gemm_shapes) shapes[shape] = m.median();
    j["gemm_tflops_by_shape"] = shapes;
    j["power_limit_w"] = g.power_limit_w > 0 ? json(g.power_limit_w) : json(nullptr);
    j["clocks_mhz"] = {{"sm", g.sm_clock_mhz}, {"sm_max", g.sm_clock_max_mhz}, {"memory", g.mem_clock_mhz}};
    j["throttle_reasons"] = g.throttle_names;
    j["ecc"] = {{"corrected", g.ecc_corrected ? json(*g.ecc_corrected) : json(nullptr)},
                {"uncorrected", g.ecc_uncorrected ? json(*g.ecc_uncorrected) : json(nullptr)}};
    std::string p = fmt::format("gpus[{}].", g.index);
    add_samples(samples, p + "h2d_GBps", g.h2d_GBps);
    add_samples(samples, p + "d2h_GBps", g.d2h_GBps);
    add_samples(samples, p + "h2d_pageable_GBps", g.h2d_pageable_GBps);
    add_samples(samples, p + "d2h_pageable_GBps", g.d2h_pageable_GBps);
    add_samples(samples, p + "hbm_GBps", g.hbm_GBps);
    add_samples(samples, p + "h2d_latency_us", g.h2d_latency_us);
    for (const auto& [shape, m] : g.gemm_shapes) samples[p + "gemm_tflops." + shape] = m.samples;
    return j;
}

// ---- text tables ----
struct Row {
    std::string figure, value, samples;
};

std::string fmt_value(double v, const char* unit) {
    if (!std::isfinite(v)) return "-";
    return fmt::format("{:.{}f} {}", v, std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2, unit);
}
std::string fmt_samples(const Measurement& m) {
    if (!m.valid()) return "";
    auto [lo, hi] = std::minmax_element(m.samples.begin(), m.samples.end());
    return fmt::format("n={} min {:.3g} max {:.3g}", m.samples.size(), *lo, *hi);
}
Row measured_row(const std::string& figure, const std::optional<Measurement>& m, const char* unit) {
    if (!m || !m->valid()) return {figure, "not measured", ""};
    return {figure, fmt_value(m->median(), unit), fmt_samples(*m)};
}

void table(std::string& out, const std::string& title, const std::vector<Row>& rows) {
    size_t w0 = 6, w1 = 5;
    for (const auto& r : rows) w0 = std::max(w0, r.figure.size()), w1 = std::max(w1, r.value.size());
    out += title + "\n";
    out += fmt::format("  {:<{}}  {:>{}}  {}\n", "figure", w0, "value", w1, "samples");
    for (const auto& r : rows) out += fmt::format("  {:<{}}  {:>{}}  {}\n", r.figure, w0, r.value, w1, r.samples);
    out += "\n";
}

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

// ---- system file ----
std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

std::string read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    std::getline(in, s);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    return s;
}

int socket_of_node(const HostInfo& h, int node) {
    if (node < 0 || static_cast<size_t>(node) >= h.numa_node_socket.size()) return 0;
    return h.numa_node_socket[static_cast<size_t>(node)];
}

double round_to(double v, int digits) {
    double p = std::pow(10.0, digits);
    return std::round(v * p) / p;
}

}  // namespace

namespace {

json threading_json(const Threading& t, int threads) {
    json env = json::object();
    for (const auto& [k, v] : t.environment) env[k] = v;
    auto text_or_null = [](const std::string& x) { return x.empty() ? json(nullptr) : json(x); };
    return {{"threads", threads}, {"threads_from", t.threads_from}, {"environment", env},
            {"blas_library", text_or_null(t.blas_library)}, {"blas_config", text_or_null(t.blas_config)},
            {"blas_threads", t.blas_threads > 0 ? json(t.blas_threads) : json(nullptr)},
            {"blas_threading", text_or_null(t.blas_threading)}};
}

json contention_json(const Contention& c) {
    json top = json::array();
    for (const auto& p : c.top) top.push_back({{"pid", p.pid}, {"name", p.name}, {"cpus", p.cpus}});
    return {{"loaded", c.loaded}, {"load_1m", c.load_1m}, {"cpus", c.cpus}, {"other_busy_fraction", c.other_busy_fraction},
            {"steal_fraction", c.steal_fraction}, {"top_processes", top}};
}

// The host's part and its benchmarks; their samples go into `samples`.
json host_json(const ProbeReport& r, json& samples) {
    const auto& h = r.host;
    const auto& hb = r.host_bench;
    json host = {
        {"cpu_model", h.cpu_model},
        {"vendor", h.vendor},
        {"sockets", h.sockets},
        {"cores", h.cores},
        {"logical_cpus", h.logical_cpus},
        {"numa_nodes", h.numa_nodes},
        {"memory_bytes", h.memory_bytes},
        {"memory_bandwidth_GBps", value_or_null(hb.memory_bandwidth_GBps)},
        {"fp32_tflops", hb.fp32 ? value_or_null(hb.fp32->tflops) : json(nullptr)},
        {"bf16_tflops", hb.bf16 ? value_or_null(hb.bf16->tflops) : json(nullptr)},
        {"threads", hb.threads},
        {"triad_array_bytes", hb.array_bytes},
        {"fp32_method", hb.fp32 ? json(hb.fp32->method) : json(nullptr)},
        {"fp32_matrix_size", hb.fp32 ? json(hb.fp32->size) : json(nullptr)},
        {"bf16_method", hb.bf16 ? json(hb.bf16->method) : json(nullptr)},
        {"bf16_matrix_size", hb.bf16 ? json(hb.bf16->size) : json(nullptr)},
        {"bf16_native", hb.bf16 ? json(hb.bf16_native) : json(nullptr)},
        {"threading", threading_json(hb.threading, hb.threads)},
        {"has_avx512_bf16", h.has_avx512_bf16},
        {"has_amx_bf16", h.has_amx_bf16},
        {"first_touch_GBps", value_or_null(hb.first_touch_GBps)},
        {"torch_op_us", hb.torch_op_us ? value_or_null(*hb.torch_op_us) : json(nullptr)},
        {"torch_runtime_rss_bytes", hb.torch_op_us ? json(hb.torch_runtime_rss_bytes) : json(nullptr)},
        {"torch_blas_switch_us", hb.torch_blas_switch_us ? value_or_null(*hb.torch_blas_switch_us) : json(nullptr)},
    };
    if (hb.memory_bandwidth_GBps.valid()) samples["host.memory_bandwidth_GBps"] = hb.memory_bandwidth_GBps.samples;
    if (hb.fp32) samples["host.fp32_tflops"] = hb.fp32->tflops.samples;
    if (hb.bf16) samples["host.bf16_tflops"] = hb.bf16->tflops.samples;
    if (hb.first_touch_GBps.valid()) samples["host.first_touch_GBps"] = hb.first_touch_GBps.samples;
    if (hb.torch_op_us) samples["host.torch_op_us"] = hb.torch_op_us->samples;
    if (hb.torch_blas_switch_us) samples["host.torch_blas_switch_us"] = hb.torch_blas_switch_us->samples;

    return host;
}

json storage_json(const ProbeReport& r, json& samples) {
    const auto& s = r.storage;
    json storage = {
        {"dir", s.dir},
        {"measured", s.measured},
        {"read_GBps", s.measured ? value_or_null(s.read_GBps) : json(nullptr)},
        {"write_GBps", s.measured ? value_or_null(s.write_GBps) : json(nullptr)},
        {"method", "O_DIRECT sequential, fdatasync after writes"},
        {"file_bytes", s.file_bytes},
        {"block_bytes", s.block_bytes},
        {"io_threads", s.io_threads},
        {"page_cache_resident_fraction", s.page_cache_resident_fraction},
        {"skipped_reason", s.skipped_reason.empty() ? json(nullptr) : json(s.skipped_reason)},
    };
    if (s.measured) {
        samples["storage.read_GBps"] = s.read_GBps.samples;
        samples["storage.write_GBps"] = s.write_GBps.samples;
    }

    return storage;
}

// PCIe devices that are GPUs, NICs or NVMe drives, or report a link.
json pcie_json(const ProbeReport& r) {
    json pcie = json::array();
    for (const auto& d : r.pci_devices) {
        std::string kind = pci_class_name(d);
        if (kind == "other" && d.max_link_gen == 0) continue;
        pcie.push_back({{"address", d.address}, {"kind", kind}, {"class", fmt::format("{:06x}", d.class_code)},
                        {"vendor", pci_id(d.vendor_id)}, {"device", pci_id(d.device_id)}, {"numa_node", d.numa_node},
                        {"gen", d.link_gen}, {"width", d.link_width}, {"max_gen", d.max_link_gen},
                        {"max_width", d.max_link_width}, {"downtrained", d.link_downtrained()},
                        {"link_GBps", pcie_link_GBps(d.link_gen, d.link_width)}});
    }
    return pcie;

}

// GPUs, their copies between each other and the collectives, into `j`; their samples into `samples`.
void add_gpus_json(const ProbeReport& r, json& j, json& samples) {
    json gpus = json::array();
    for (const auto& g : r.gpus) gpus.push_back(gpu_json(g, samples));
    j["gpus"] = gpus;
    json peers = json::array();
    for (const auto& p : r.peer_copies) {
        peers.push_back({{"src", p.src}, {"dst", p.dst}, {"peer_access", p.peer_access}, {"GBps", p.GBps.median()}});
        samples[fmt::format("gpu_to_gpu[{}->{}].GBps", p.src, p.dst)] = p.GBps.samples;
    }
    j["gpu_to_gpu"] = peers;
    json colls = json::array();
    for (const auto& c : r.collectives) {
        colls.push_back({{"op", c.op}, {"bytes", c.bytes}, {"gpus", c.gpus}, {"busbw_GBps", c.busbw_GBps.median()}});
        samples[fmt::format("collectives.{}.busbw_GBps", c.op)] = c.busbw_GBps.samples;
    }
    j["collectives"] = colls;
}

std::vector<Row> host_rows(const ProbeReport& r) {
    const auto& h = r.host;
    const auto& hb = r.host_bench;
    std::vector<Row> rows = {
        {"cpu", h.cpu_model, ""},
        {"sockets / cores / cpus", fmt::format("{} / {} / {}", h.sockets, h.cores, h.logical_cpus), ""},
        {"numa nodes", std::to_string(h.numa_nodes), ""},
        {"memory", gib(h.memory_bytes), ""},
    };
    rows.push_back(measured_row(fmt::format("memory bandwidth (triad, {} threads)", hb.threads),
                                     hb.memory_bandwidth_GBps.valid() ? std::optional<Measurement>(hb.memory_bandwidth_GBps) : std::nullopt,
                                     "GB/s"));
    rows.push_back(hb.fp32 ? measured_row(fmt::format("fp32 matmul ({}, n={})", hb.fp32->method, hb.fp32->size), hb.fp32->tflops, "TFLOP/s")
                                : Row{"fp32 matmul", "not measured", ""});
    rows.push_back(hb.bf16 ? measured_row(fmt::format("bf16 matmul ({}, n={})", hb.bf16->method, hb.bf16->size), hb.bf16->tflops, "TFLOP/s")
                                : Row{"bf16 matmul", "not measured", hb.bf16_skipped_reason});
    std::string blas = hb.threading.blas_library.empty() ? std::string("-") : hb.threading.blas_library;
    if (!hb.threading.blas_threading.empty()) blas += " (" + hb.threading.blas_threading + ")";
    rows.push_back({"threads (from) / BLAS", fmt::format("{} ({})", hb.threads, hb.threading.threads_from), blas});
    rows.push_back(measured_row(fmt::format("fresh pages written (first touch, {} threads)", hb.threads),
                                     hb.first_touch_GBps.valid() ? std::optional<Measurement>(hb.first_touch_GBps) : std::nullopt,
                                     "GB/s"));
    rows.push_back(hb.torch_op_us ? measured_row("PyTorch per-op host time (eager, autograd)", *hb.torch_op_us, "us")
                                       : Row{"PyTorch per-op host time", "not measured", hb.torch_skipped_reason});
    if (hb.torch_blas_switch_us)
        rows.push_back(measured_row("PyTorch GEMM call between OpenMP ops, extra", *hb.torch_blas_switch_us, "us"));

    return rows;
}

std::vector<Row> storage_rows(const ProbeReport& r) {
    const auto& s = r.storage;
    std::vector<Row> rows;
    if (s.measured) {
        rows.push_back(measured_row("sequential read (O_DIRECT)", s.read_GBps, "GB/s"));
        rows.push_back(measured_row("sequential write (O_DIRECT + fdatasync)", s.write_GBps, "GB/s"));
        rows.push_back({"file / block / threads",
                                fmt::format("{:.0f} MiB / {:.0f} MiB / {}", s.file_bytes / kMiB, s.block_bytes / kMiB, s.io_threads), ""});
        rows.push_back({"left in page cache", fmt::format("{:.1f} %", 100 * s.page_cache_resident_fraction), ""});
    } else {
        rows.push_back({"storage", "not measured", s.skipped_reason});
    }

    return rows;
}

// Per GPU, then copies between GPUs and collectives.
void add_gpu_tables(const ProbeReport& r, std::string& out) {
    for (const auto& g : r.gpus) {
        std::vector<Row> rows = {
            {"name", g.name, g.pci_address},
            {"memory", gib(g.memory_bytes), ""},
            {"numa node", std::to_string(g.numa_node), ""},
            {"pcie link", fmt::format("gen{} x{} (max gen{} x{})", g.pcie_gen, g.pcie_width, g.pcie_max_gen, g.pcie_max_width), ""},
            {"power limit", g.power_limit_w > 0 ? fmt_value(g.power_limit_w, "W") : "-", ""},
            {"sm clock", fmt::format("{:.0f} / {:.0f} MHz", g.sm_clock_mhz, g.sm_clock_max_mhz), ""},
        };
        rows.push_back(measured_row("h2d pinned", g.h2d_GBps, "GB/s"));
        rows.push_back(measured_row("d2h pinned", g.d2h_GBps, "GB/s"));
        rows.push_back(measured_row("h2d pageable", g.h2d_pageable_GBps, "GB/s"));
        rows.push_back(measured_row("d2h pageable", g.d2h_pageable_GBps, "GB/s"));
        rows.push_back(measured_row("h2d latency (4 B)", g.h2d_latency_us, "us"));
        rows.push_back(measured_row("hbm (d2d copy, read+write)", g.hbm_GBps, "GB/s"));
        for (const auto& [shape, m] : g.gemm_shapes) rows.push_back(measured_row("gemm " + shape, m, "TFLOP/s"));
        if (g.ecc_uncorrected)
            rows.push_back({"ecc (corrected / uncorrected)", fmt::format("{} / {}", g.ecc_corrected.value_or(0), *g.ecc_uncorrected), ""});
        std::string throttles;
        for (const auto& t : g.throttle_names) throttles += (throttles.empty() ? "" : ", ") + t;
        rows.push_back({"throttle reasons", throttles.empty() ? "none" : throttles, ""});
        table(out, fmt::format("gpu{}", g.index), rows);
    }
    if (!r.peer_copies.empty()) {
        std::vector<Row> rows;
        for (const auto& p : r.peer_copies)
            rows.push_back(measured_row(fmt::format("gpu{} -> gpu{}{}", p.src, p.dst, p.peer_access ? "" : " (via host)"), p.GBps, "GB/s"));
        table(out, "gpu to gpu copies", rows);
    }
    if (!r.collectives.empty()) {
        std::vector<Row> rows;
        for (const auto& c : r.collectives)
            rows.push_back(measured_row(fmt::format("{} busbw ({} GPUs, {:.0f} MiB)", c.op, c.gpus, c.bytes / kMiB), c.busbw_GBps, "GB/s"));
        table(out, "nccl", rows);
    }
}

void add_pcie_table(const ProbeReport& r, std::string& out) {
    std::vector<Row> pci_rows;
    for (const auto& d : r.pci_devices) {
        std::string kind = pci_class_name(d);
        if (kind == "other") continue;
        pci_rows.push_back({fmt::format("{} {}", kind, d.address),
                            d.max_link_gen ? fmt::format("gen{} x{} / gen{} x{}", d.link_gen, d.link_width, d.max_link_gen, d.max_link_width) : "no link info",
                            fmt::format("numa {}", d.numa_node)});
    }
    if (!pci_rows.empty()) table(out, "pcie devices (current / max)", pci_rows);
}

}  // namespace

json to_json(const ProbeReport& r) {
    json j;
    json samples = json::object();
    j["hostname"] = r.hostname;
    j["host"] = host_json(r, samples);
    j["storage"] = storage_json(r, samples);
    j["pcie"] = pcie_json(r);
    add_gpus_json(r, j, samples);
    j["contention"] = contention_json(r.contention);
    j["warnings"] = r.warnings;
    j["skipped"] = r.skipped;
    j["samples"] = samples;
    json spread = json::object();  // (max - min) / median of each figure's samples
    for (auto& [key, values] : samples.items())
        spread[key] = measurement_of(values.get<std::vector<double>>()).relative_spread();
    j["spread"] = spread;
    j["wall_seconds"] = r.wall_seconds;
    return j;
}

std::string to_text(const ProbeReport& r) {
    std::string out;
    table(out, "host" + (r.hostname.empty() ? std::string() : " " + r.hostname), host_rows(r));
    table(out, "storage " + r.storage.dir, storage_rows(r));
    add_gpu_tables(r, out);
    add_pcie_table(r, out);
    for (const auto& w : r.warnings) out += "warning: " + w + "\n";
    for (const auto& s2 : r.skipped) out += "skipped: " + s2 + "\n";
    if (!r.contention.loaded)
        out += fmt::format("contention: none seen (other processes {:.0f}% of {} CPUs, steal {:.0f}%)\n",
                           100 * r.contention.other_busy_fraction, r.contention.cpus, 100 * r.contention.steal_fraction);
    out += fmt::format("probe took {:.1f} s\n", r.wall_seconds);
    return out;
}

namespace {

// The system file being written and the fields in it that were measured (not read from sysfs or the catalog).
struct SystemYaml {
    YAML::Emitter y;
    std::vector<std::string> measured;
};

// The slowest GPU's figure stands for all: one weak GPU paces a synchronous job.
std::optional<double> slowest_gpu(const ProbeReport& r, const std::optional<Measurement>& (*get)(const GpuInfo&)) {
    std::optional<double> v;
    for (const auto& x : r.gpus)
        if (const std::optional<Measurement>& m = get(x); m && m->median() > 0) v = v ? std::min(*v, m->median()) : m->median();
    return v;
}

void emit_gpu(SystemYaml& out, const ProbeReport& r) {
    YAML::Emitter& y = out.y;
    const GpuInfo& g = r.gpus.front();  // a node's GPUs are one part (SystemSpec: one device per node)
    y << YAML::Key << "gpu" << YAML::Value << YAML::BeginMap;
    std::string base = catalog_gpu_name(g.name, g.memory_bytes);
    if (!base.empty()) y << YAML::Key << "base" << YAML::Value << base;
    y << YAML::Key << "memory" << YAML::Value << static_cast<uint64_t>(g.memory_bytes);
    if (auto bw = slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.hbm_GBps; })) {
        y << YAML::Key << "memory_bandwidth_GBps" << YAML::Value << round_to(*bw, 1);
        out.measured.push_back("device.memory_bandwidth_GBps");
    }
    const std::vector<std::pair<const char*, std::optional<double>>> rates = {
        {"fp32", slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.tflops.fp32; })},
        {"tf32", slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.tflops.tf32; })},
        {"fp16", slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.tflops.fp16; })},
        {"bf16", slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.tflops.bf16; })},
        {"fp8", slowest_gpu(r, [](const GpuInfo& x) -> const std::optional<Measurement>& { return x.tflops.fp8; })}};
    bool any_rate = false;
    for (auto& [k, v] : rates) any_rate |= v.has_value();
    if (any_rate) {
        y << YAML::Key << "tflops" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (auto& [k, v] : rates)
            if (v) {
                y << YAML::Key << k << YAML::Value << round_to(*v, 1);
                out.measured.push_back(std::string("device.tflops.") + k);
            }
        y << YAML::EndMap;
    }
    if (g.power_limit_w > 0) y << YAML::Key << "tdp_w" << YAML::Value << round_to(g.power_limit_w, 0);
    if (g.pcie_max_gen > 0) y << YAML::Key << "host_link" << YAML::Value << fmt::format("pcie{}", g.pcie_max_gen);
    y << YAML::EndMap;
    y << YAML::Key << "gpus_per_node" << YAML::Value << static_cast<int>(r.gpus.size());
}

bool positive(const std::optional<GemmRate>& g) { return g && g->tflops.median() > 0; }

// The CPU as a devices/cpus mapping, per socket: the catalog may not know this part. Measured all-socket figures
// are divided evenly over the sockets.
void emit_cpu(SystemYaml& out, const ProbeReport& r, int sockets) {
    YAML::Emitter& y = out.y;
    const auto& h = r.host;
    const auto& hb = r.host_bench;
    auto measured_field = [&](const char* key, double value, const char* field) {
        y << YAML::Key << key << YAML::Value << value;
        out.measured.push_back(field);
    };
    y << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << (h.cpu_model.empty() ? std::string("unknown-cpu") : h.cpu_model);
    y << YAML::Key << "kind" << YAML::Value << "cpu";
    y << YAML::Key << "vendor" << YAML::Value << (h.vendor.empty() ? std::string("unknown") : h.vendor);
    y << YAML::Key << "cores" << YAML::Value << std::max(1, h.cores / sockets);
    if (hb.memory_bandwidth_GBps.median() > 0)
        measured_field("memory_bandwidth_GBps", round_to(hb.memory_bandwidth_GBps.median() / sockets, 2),
                       "host_cpu.memory_bandwidth_GBps");
    if (positive(hb.fp32) || positive(hb.bf16)) {
        y << YAML::Key << "tflops" << YAML::Value << YAML::Flow << YAML::BeginMap;
        if (positive(hb.fp32)) measured_field("fp32", round_to(hb.fp32->tflops.median() / sockets, 4), "host_cpu.tflops.fp32");
        // Measured as this CPU runs bf16 (converted to fp32 where it has no bf16 units): slow, never 0, so a bf16 job
        // is planned at that rate rather than refused.
        if (positive(hb.bf16)) measured_field("bf16", round_to(hb.bf16->tflops.median() / sockets, 4), "host_cpu.tflops.bf16");
        y << YAML::EndMap;
    }
    if (hb.first_touch_GBps.median() > 0)
        measured_field("first_touch_GBps", round_to(hb.first_touch_GBps.median() / sockets, 2), "host_cpu.first_touch_GBps");
    if (hb.torch_op_us) {
        measured_field("op_overhead_us", round_to(hb.torch_op_us->median(), 2), "host_cpu.op_overhead_us");
        y << YAML::Key << "runtime_rss" << YAML::Value << static_cast<uint64_t>(hb.torch_runtime_rss_bytes);
        out.measured.push_back("host_cpu.runtime_rss");
    }
    if (hb.torch_blas_switch_us)
        measured_field("blas_switch_us", round_to(hb.torch_blas_switch_us->median(), 1), "host_cpu.blas_switch_us");
    y << YAML::EndMap;
}

void emit_storage(SystemYaml& out, const ProbeReport& r) {
    if (!r.storage.measured || !(r.storage.read_GBps.median() > 0) || !(r.storage.write_GBps.median() > 0)) return;
    YAML::Emitter& y = out.y;
    y << YAML::Key << "storage" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "read_GBps" << YAML::Value << round_to(r.storage.read_GBps.median(), 3);
    y << YAML::Key << "write_GBps" << YAML::Value << round_to(r.storage.write_GBps.median(), 3);
    y << YAML::EndMap;
    out.measured.push_back("local_storage.read_GBps");
    out.measured.push_back("local_storage.write_GBps");
}

// What the components list names: the GPUs by CUDA index and the NICs and NVMe drives as found.
struct ComponentIds {
    std::vector<const GpuInfo*> gpus;
    std::vector<std::pair<std::string, const PciDevice*>> endpoints;
};

void emit_component(YAML::Emitter& y, const std::string& id, const char* kind, int socket) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "id" << YAML::Value << id << YAML::Key << "kind" << YAML::Value
      << kind << YAML::Key << "socket" << YAML::Value << socket << YAML::EndMap;
}

// Components: sockets, GPUs (by CUDA index), NICs, NVMe drives, each on the socket of its NUMA node.
ComponentIds emit_components(YAML::Emitter& y, const ProbeReport& r, int sockets) {
    const auto& h = r.host;
    ComponentIds ids;
    y << YAML::Key << "components" << YAML::Value << YAML::BeginSeq;
    for (int sidx = 0; sidx < sockets; ++sidx) emit_component(y, fmt::format("cpu{}", sidx), "cpu_socket", sidx);
    for (const auto& g : r.gpus) ids.gpus.push_back(&g);
    std::sort(ids.gpus.begin(), ids.gpus.end(), [](auto* a, auto* b) { return a->index < b->index; });
    for (size_t i = 0; i < ids.gpus.size(); ++i)
        emit_component(y, fmt::format("gpu{}", i), "gpu", socket_of_node(h, ids.gpus[i]->numa_node));
    int nics = 0, nvmes = 0;
    for (const auto& d : r.pci_devices) {
        if (!d.is_nic() && !d.is_nvme()) continue;
        const std::string id = d.is_nic() ? fmt::format("nic{}", nics++) : fmt::format("nvme{}", nvmes++);
        ids.endpoints.emplace_back(id, &d);
        emit_component(y, id, d.is_nic() ? "nic" : "nvme", socket_of_node(h, d.numa_node));
    }
    y << YAML::EndSeq;
    return ids;
}

void emit_link(YAML::Emitter& y, const std::string& a, const std::string& b, double bw, std::optional<double> latency_us,
               std::optional<double> achievable) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "a" << YAML::Value << a << YAML::Key << "b" << YAML::Value << b;
    y << YAML::Key << "link" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "bandwidth_GBps" << YAML::Value << round_to(bw, 2);
    if (latency_us) y << YAML::Key << "latency_us" << YAML::Value << round_to(*latency_us, 2);
    if (achievable) y << YAML::Key << "achievable_fraction" << YAML::Value << *achievable;
    y << YAML::EndMap << YAML::EndMap;
}

// Links. GPU-host links carry the measured pinned copy rate (the slower direction); GPU-GPU links the measured
// peer copy rate; NIC and NVMe links the PCIe rate of their trained link.
void emit_links(SystemYaml& out, const ProbeReport& r, const ComponentIds& ids) {
    YAML::Emitter& y = out.y;
    const auto& h = r.host;
    y << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
    for (size_t i = 0; i < ids.gpus.size(); ++i) {
        const GpuInfo& g = *ids.gpus[i];
        std::string a = fmt::format("gpu{}", i), b = fmt::format("cpu{}", socket_of_node(h, g.numa_node));
        if (g.h2d_GBps && g.d2h_GBps) {
            // Measured: the achievable rate itself, so achievable_fraction is 1.
            emit_link(y, a, b, std::min(g.h2d_GBps->median(), g.d2h_GBps->median()),
                      g.h2d_latency_us ? std::optional<double>(g.h2d_latency_us->median()) : std::nullopt, 1.0);
            out.measured.push_back(fmt::format("links.{}-{}.bandwidth_GBps", a, b));
        } else if (g.pcie_max_gen > 0) {
            y << YAML::Flow << YAML::BeginMap << YAML::Key << "a" << YAML::Value << a << YAML::Key << "b" << YAML::Value << b
              << YAML::Key << "link" << YAML::Value << fmt::format("pcie{}", g.pcie_max_gen) << YAML::EndMap;
        }
    }
    std::map<std::pair<int, int>, double> peer;  // slower direction of each pair
    std::map<std::pair<int, int>, bool> direct;
    for (const auto& p : r.peer_copies) {
        auto key = std::minmax(p.src, p.dst);
        auto it = peer.find(key);
        peer[key] = it == peer.end() ? p.GBps.median() : std::min(it->second, p.GBps.median());
        direct[key] = p.peer_access;
    }
    for (const auto& [key, bw] : peer) {
        if (!direct[key]) continue;  // staged through the host: the GPU-CPU links already describe that path
        std::string a = fmt::format("gpu{}", key.first), b = fmt::format("gpu{}", key.second);
        emit_link(y, a, b, bw, std::nullopt, 1.0);
        out.measured.push_back(fmt::format("links.{}-{}.bandwidth_GBps", a, b));
    }
    for (const auto& [id, d] : ids.endpoints) {
        double bw = pcie_link_GBps(d->link_gen, d->link_width);
        if (bw <= 0) continue;
        emit_link(y, id, fmt::format("cpu{}", socket_of_node(h, d->numa_node)), bw, std::nullopt, std::nullopt);
    }
    y << YAML::EndSeq;
}

}  // namespace

std::string to_system_yaml(const ProbeReport& r) {
    const int sockets = std::max(1, r.host.sockets);
    const bool cpu_only = r.gpus.empty();
    const std::string host = r.hostname.empty() ? "localhost" : r.hostname;
    SystemYaml out;
    YAML::Emitter& y = out.y;
    y.SetDoublePrecision(6);  // figures are rounded already; this keeps 10.61 from printing as 10.6099999
    y << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << "probed-" + host;
    std::string vendor = read_first_line("/sys/class/dmi/id/sys_vendor");
    y << YAML::Key << "vendor" << YAML::Value << (vendor.empty() ? std::string("unknown") : vendor);
    if (!cpu_only) emit_gpu(out, r);
    emit_cpu(out, r, sockets);
    y << YAML::Key << "sockets" << YAML::Value << sockets;
    y << YAML::Key << "cpu_only" << YAML::Value << cpu_only;
    y << YAML::Key << "host_memory" << YAML::Value << static_cast<uint64_t>(r.host.memory_bytes);
    emit_storage(out, r);
    emit_links(out, r, emit_components(y, r, sockets));

    y << YAML::Key << "measured_fields" << YAML::Value << YAML::BeginSeq;
    for (const auto& m : out.measured) y << m;
    y << YAML::EndSeq;
    y << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
    y << fmt::format("ftbound probe on {}, {}: fields in measured_fields are medians of the samples taken then", host, today());
    y << "NIC and NVMe links: PCIe signalling rate of the trained link (PCIe base specification), not measured";
    y << YAML::EndSeq;
    y << YAML::EndMap;
    return std::string("# Written by `ftbound probe --out`. Use it as `hardware.system: ./THIS_FILE.yaml`.\n") + y.c_str() + "\n";
}

}  // namespace ftb::probe
