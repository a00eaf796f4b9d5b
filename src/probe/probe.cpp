#include "probe/probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "probe/contention.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/host_bench.hpp"
#include "probe/storage_bench.hpp"
#include "probe/sysfs.hpp"

namespace ftb::probe {
namespace {

void add_gpu_warnings(ProbeReport& r) {
    for (const auto& g : r.gpus) {
        std::string id = fmt::format("gpu{} ({})", g.index, g.name);
        // Read under load (after the copies), so a gen below the maximum is a real down-training,
        // not the idle power-saving state.
        if (g.pcie_max_gen > 0 && g.pcie_gen > 0 && g.h2d_GBps && g.pcie_gen < g.pcie_max_gen)
            r.warnings.push_back(fmt::format("pcie: {} link at gen{} under load, the GPU supports gen{}", id, g.pcie_gen, g.pcie_max_gen));
        if (g.pcie_max_width > 0 && g.pcie_width > 0 && g.pcie_width < g.pcie_max_width)
            r.warnings.push_back(fmt::format("pcie: {} link at x{}, the GPU supports x{}", id, g.pcie_width, g.pcie_max_width));
        if (g.h2d_GBps && g.pcie_gen > 0 && g.pcie_width > 0) {
            double link = pcie_link_GBps(g.pcie_gen, g.pcie_width);
            // Well-configured PCIe hosts reach 75-85 % of the link in pinned copies (DESIGN.md: PCIe 5.0 x16
            // ~64 GB/s, measured 35-53 GB/s); below half points at the root port, IOMMU or a shared switch.
            if (link > 0 && g.h2d_GBps->median() < 0.5 * link)
                r.warnings.push_back(fmt::format("pcie: {} pinned H2D {:.1f} GB/s is under half of its gen{} x{} link ({:.1f} GB/s)",
                                                 id, g.h2d_GBps->median(), g.pcie_gen, g.pcie_width, link));
        }
        for (const auto& t : g.throttle_names)
            if (t != "sync_boost" && t != "display_clock")
                r.warnings.push_back(fmt::format("gpu: {} clocks held back: {}", id, t));
        if (g.ecc_uncorrected && *g.ecc_uncorrected > 0)
            r.warnings.push_back(fmt::format("gpu: {} has {} uncorrected ECC errors since the driver loaded", id, *g.ecc_uncorrected));
    }
}

}  // namespace

std::string catalog_gpu_name(const std::string& device_name, double memory_bytes) {
    std::string n = device_name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
    const double gib = 1024.0 * 1024.0 * 1024.0;
    // NVML device names as the driver reports them (nvidia-smi -L), mapped to CONTRACT.md catalog names.
    if (has("GH200")) return "gh200";
    if (has("GB200")) return "gb200";
    if (has("B200")) return "b200";
    if (has("H200")) return has("NVL") ? "h200-nvl" : "h200-sxm";
    if (has("H100")) return has("NVL") ? "h100-nvl" : has("PCIE") ? "h100-pcie" : "h100-sxm";
    if (has("A100")) {
        bool big = memory_bytes > 60 * gib;
        if (has("PCIE")) return big ? "a100-pcie-80gb" : "a100-pcie-40gb";
        return big ? "a100-sxm-80gb" : "a100-sxm-40gb";
    }
    if (has("V100") && has("SXM") && memory_bytes > 20 * gib) return "v100-sxm-32gb";
    if (has("L40S")) return "l40s";
    if (n.size() >= 3 && n.compare(n.size() - 3, 3, " L4") == 0) return "l4";
    if (has("RTX 4090")) return "rtx-4090";
    if (has("RTX 3090")) return "rtx-3090";
    if (has("RTX A6000")) return "rtx-a6000";
    return {};
}

namespace {

void probe_host(const ProbeOptions& opt, ProbeReport& r) {
    HostBenchOptions hb;
    hb.threads = opt.threads;
    hb.torch = opt.torch;
    hb.python = opt.python;
    if (opt.quick) {
        hb.triad_repetitions = 5;
        hb.gemm_repetitions = 3;
        hb.gemm_min_seconds = 0.03;
    }
    r.host_bench = run_host_bench(r.host, hb);
    if (!r.host_bench.bf16) r.skipped.push_back("host bf16 matmul: " + r.host_bench.bf16_skipped_reason);
    else if (!r.host_bench.bf16_native && r.host_bench.fp32)
        r.warnings.push_back(fmt::format("cpu: no bf16 matrix units (AVX512-BF16, AMX) and no BLAS sbgemm: bf16 matmuls run "
                                         "converted to fp32, measured {:.3g} TFLOP/s ({:.2f}x the fp32 rate); PyTorch's own "
                                         "fallback kernel may be slower still",
                                         r.host_bench.bf16->tflops.median(),
                                         r.host_bench.bf16->tflops.median() / r.host_bench.fp32->tflops.median()));
    if (!r.host_bench.fp32) r.skipped.push_back("host fp32 matmul: ftbound was built without a BLAS");
    if (!r.host_bench.torch_op_us) r.skipped.push_back("PyTorch per-op time: " + r.host_bench.torch_skipped_reason);
}

// A figure whose samples disagree by more than this did not hold still while it was measured (a design choice: on an
// idle machine the host figures repeat within a few per cent).
constexpr double kUnsteadySpread = 0.10;

void add_spread_warnings(ProbeReport& r) {
    const auto& hb = r.host_bench;
    const std::vector<std::pair<const char*, const Measurement*>> figures = {
        {"host.memory_bandwidth_GBps", &hb.memory_bandwidth_GBps},
        {"host.fp32_tflops", hb.fp32 ? &hb.fp32->tflops : nullptr},
        {"host.bf16_tflops", hb.bf16 ? &hb.bf16->tflops : nullptr},
        {"host.first_touch_GBps", &hb.first_touch_GBps},
        {"storage.read_GBps", r.storage.measured ? &r.storage.read_GBps : nullptr},
        {"storage.write_GBps", r.storage.measured ? &r.storage.write_GBps : nullptr}};
    for (const auto& [name, m] : figures)
        if (m && m->relative_spread() > kUnsteadySpread)
            r.warnings.push_back(fmt::format("unsteady: {} samples spread {:.0f}% around their median {:.3g} ({} samples){}",
                                             name, 100 * m->relative_spread(), m->median(), m->samples.size(),
                                             r.contention.loaded ? ", with the machine under load" : ""));
}

void probe_storage(const ProbeOptions& opt, ProbeReport& r) {
    StorageBenchOptions so;
    if (opt.quick) {
        so.file_bytes = 64.0 * 1024 * 1024;
        so.repetitions = 2;
    }
    r.storage = run_storage_bench(opt.storage_dir, so);
    if (!r.storage.measured) r.skipped.push_back("storage: " + r.storage.skipped_reason);
    else if (r.storage.page_cache_resident_fraction > 0.01)
        r.warnings.push_back(fmt::format("storage: {:.0f} % of the test file stayed in the page cache; "
                                         "the filesystem may ignore O_DIRECT and the figures may be cache speed",
                                         100 * r.storage.page_cache_resident_fraction));
}

// PCIe state and clock-event reasons read again right after the load.
void refresh_gpu_state(ProbeReport& r) {
    const NvmlResult after = read_nvml();
    for (auto& g : r.gpus)
        for (const auto& a : after.gpus)
            if (!g.pci_address.empty() && a.pci_address == g.pci_address) {
                g.pcie_gen = a.pcie_gen;
                g.pcie_width = a.pcie_width;
                g.throttle_reasons = a.throttle_reasons;
                g.throttle_names = a.throttle_names;
            }
}

void probe_gpus(const ProbeOptions& opt, ProbeReport& r) {
    const size_t pci_gpus = std::count_if(r.pci_devices.begin(), r.pci_devices.end(), [](auto& d) { return d.is_gpu(); });
    NvmlResult nvml = read_nvml();
    if (!nvml.available) {
        r.skipped.push_back("gpu: " + nvml.skipped_reason +
                            (pci_gpus ? fmt::format("; {} GPU(s) seen on PCIe", pci_gpus) : std::string()));
    } else if (nvml.gpus.empty()) {
        r.skipped.push_back("gpu: NVML reports no GPU");
    } else {
        r.gpus = std::move(nvml.gpus);
        const CudaProbeResult cuda = run_cuda_probe(r, opt.quick);
        if (!cuda.ran) r.skipped.push_back("gpu measurements: " + cuda.skipped_reason);
        refresh_gpu_state(r);
    }
    for (auto& g : r.gpus)
        for (const auto& d : r.pci_devices)
            if (d.address == g.pci_address) g.numa_node = d.numa_node;
    add_gpu_warnings(r);
}

}  // namespace

ProbeReport run_probe(const ProbeOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    ProbeReport r;
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) == 0) r.hostname = host;
    r.host = read_host_info(opt.sysfs_root);
    r.pci_devices = read_pci_devices(opt.sysfs_root);
    for (auto& w : pcie_warnings(r.pci_devices)) r.warnings.push_back(std::move(w));

    const std::vector<int> cpus = allowed_cpus();
    const CpuCounters before = read_cpu_counters(cpus, opt.sysfs_root);
    if (opt.host_bench) probe_host(opt, r);
    else r.skipped.push_back("host benchmarks: turned off");
    if (opt.storage) {
        probe_storage(opt, r);
    } else {
        r.storage.dir = opt.storage_dir;
        r.storage.skipped_reason = "turned off";
        r.skipped.push_back("storage: turned off");
    }
    r.contention = contention_between(before, read_cpu_counters(cpus, opt.sysfs_root), static_cast<int>(cpus.size()));
    if (r.contention.loaded) r.warnings.push_back(r.contention.summary);
    add_spread_warnings(r);
    if (opt.gpu) probe_gpus(opt, r);
    else r.skipped.push_back("gpu: turned off");
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace ftb::probe
