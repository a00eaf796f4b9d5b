#include "probe/gpu_probe.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ftbound/error.hpp"
#include "probe/cuda/cuda_probe_api.h"

namespace fs = std::filesystem;

namespace ftb::probe {
namespace {

// The NVML types and entry points we use, declared here (nvml.h ships with the driver, not with every
// CUDA install). Layouts and values follow NVIDIA's nvml.h (NVML API Reference, "Device Queries").
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
    unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};
constexpr int kClockSm = 1, kClockMem = 2;            // nvmlClockType_t
constexpr int kEccCorrected = 0, kEccUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kEccVolatile = 0;                        // nvmlEccCounterType_t: since the last driver load

struct Nvml {
    void* lib = nullptr;
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*count)(unsigned*) = nullptr;
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*gen)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*width)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*max_gen)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*max_width)(nvmlDevice_t, unsigned*) = nullptr;
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;

    template <typename F>
    void bind(F& f, std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (void* p = dlsym(lib, n)) {
                f = reinterpret_cast<F>(p);
                return;
            }
    }
};

// "00000000:17:00.0" (NVML, CUDA) -> "0000:17:00.0" (sysfs), lower-case.
std::string normalise_bus_id(std::string id) {
    for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto colon = id.find(':');
    if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
    return id;
}

std::string exe_dir() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    buf[n] = 0;
    return fs::path(buf).parent_path().string();
}

std::optional<Measurement> samples_at(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_array() || j[key].empty()) return std::nullopt;
    std::vector<double> v;
    for (const auto& x : j[key])
        if (x.is_number()) v.push_back(x.get<double>());
    if (v.empty()) return std::nullopt;
    return measurement_of(std::move(v));
}

}  // namespace

std::vector<std::string> throttle_reason_names(uint64_t mask) {
    // nvmlClocksEventReason* bits (nvml.h): 0x1 GPU idle, 0x2 application clocks setting,
    // 0x4 SW power cap, 0x8 HW slowdown, 0x10 sync boost, 0x20 SW thermal, 0x40 HW thermal,
    // 0x80 HW power brake, 0x100 display clock setting.
    static const std::pair<uint64_t, const char*> bits[] = {
        {0x4, "sw_power_cap"},     {0x8, "hw_slowdown"},        {0x10, "sync_boost"},
        {0x20, "sw_thermal"},      {0x40, "hw_thermal"},        {0x80, "hw_power_brake"},
        {0x100, "display_clock"}};
    std::vector<std::string> out;
    for (auto& [bit, name] : bits)
        if (mask & bit) out.emplace_back(name);
    return out;
}

namespace {

void bind_nvml_symbols(Nvml& n) {
    n.bind(n.init, {"nvmlInit_v2", "nvmlInit"});
    n.bind(n.shutdown, {"nvmlShutdown"});
    n.bind(n.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    n.bind(n.handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    n.bind(n.name, {"nvmlDeviceGetName"});
    n.bind(n.memory, {"nvmlDeviceGetMemoryInfo"});
    n.bind(n.power_limit, {"nvmlDeviceGetPowerManagementLimit"});
    n.bind(n.clock, {"nvmlDeviceGetClockInfo"});
    n.bind(n.max_clock, {"nvmlDeviceGetMaxClockInfo"});
    n.bind(n.throttle, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    n.bind(n.gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
    n.bind(n.width, {"nvmlDeviceGetCurrPcieLinkWidth"});
    n.bind(n.max_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"});
    n.bind(n.max_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
    n.bind(n.ecc, {"nvmlDeviceGetTotalEccErrors"});
    n.bind(n.pci, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
}

// One GPU's identity, memory, power limit, clocks, throttle reasons, PCIe link and ECC counters (each left unset
// when the driver does not answer it).
GpuInfo read_nvml_gpu(const Nvml& n, nvmlDevice_t dev, unsigned i) {
    GpuInfo g;
    g.index = static_cast<int>(i);
    char name[96] = {0};
    if (n.name && n.name(dev, name, sizeof name) == 0) g.name = name;
    nvmlMemory_t mem{};
    if (n.memory && n.memory(dev, &mem) == 0) g.memory_bytes = static_cast<double>(mem.total);
    unsigned v = 0;
    if (n.power_limit && n.power_limit(dev, &v) == 0) g.power_limit_w = v / 1000.0;  // NVML reports mW
    if (n.clock && n.clock(dev, kClockSm, &v) == 0) g.sm_clock_mhz = v;
    if (n.clock && n.clock(dev, kClockMem, &v) == 0) g.mem_clock_mhz = v;
    if (n.max_clock && n.max_clock(dev, kClockSm, &v) == 0) g.sm_clock_max_mhz = v;
    unsigned long long reasons = 0;
    if (n.throttle && n.throttle(dev, &reasons) == 0) {
        g.throttle_reasons = reasons;
        g.throttle_names = throttle_reason_names(reasons);
    }
    if (n.gen && n.gen(dev, &v) == 0) g.pcie_gen = static_cast<int>(v);
    if (n.width && n.width(dev, &v) == 0) g.pcie_width = static_cast<int>(v);
    if (n.max_gen && n.max_gen(dev, &v) == 0) g.pcie_max_gen = static_cast<int>(v);
    if (n.max_width && n.max_width(dev, &v) == 0) g.pcie_max_width = static_cast<int>(v);
    unsigned long long ecc = 0;
    if (n.ecc && n.ecc(dev, kEccCorrected, kEccVolatile, &ecc) == 0) g.ecc_corrected = ecc;
    if (n.ecc && n.ecc(dev, kEccUncorrected, kEccVolatile, &ecc) == 0) g.ecc_uncorrected = ecc;
    nvmlPciInfo_t pci{};
    if (n.pci && n.pci(dev, &pci) == 0) g.pci_address = normalise_bus_id(pci.busId);
    return g;
}

}  // namespace

NvmlResult read_nvml() {
    NvmlResult r;
    Nvml n;
    n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) n.lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) {
        r.skipped_reason = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
        return r;
    }
    bind_nvml_symbols(n);
    unsigned count = 0;
    if (!n.init || !n.count || !n.handle || n.init() != 0) {
        r.skipped_reason = "NVML did not initialise (driver not loaded?)";
        dlclose(n.lib);
        return r;
    }
    r.available = true;
    if (n.count(&count) != 0) count = 0;
    for (unsigned i = 0; i < count; ++i) {
        nvmlDevice_t dev = nullptr;
        if (n.handle(i, &dev) == 0) r.gpus.push_back(read_nvml_gpu(n, dev, i));
    }
    if (n.shutdown) n.shutdown();
    // libnvidia-ml stays loaded: unloading a driver library mid-process gains nothing.
    return r;
}

namespace {

// The GPU the CUDA probe's device entry describes, matched by PCI bus id (CUDA and NVML may order GPUs
// differently, CUDA_DEVICE_ORDER); a GPU NVML did not list is added.
GpuInfo& gpu_for_cuda_device(const nlohmann::json& d, ProbeReport& report) {
    const std::string bus = normalise_bus_id(d.value("pci_bus_id", std::string()));
    auto it = std::find_if(report.gpus.begin(), report.gpus.end(),
                           [&](const GpuInfo& g) { return !bus.empty() && g.pci_address == bus; });
    if (it != report.gpus.end()) return *it;
    GpuInfo g;
    g.name = d.value("name", std::string());
    g.pci_address = bus;
    g.memory_bytes = d.value("memory_bytes", 0.0);
    report.gpus.push_back(g);
    return report.gpus.back();
}

// Each measured GEMM shape, and per dtype the best shape's median (the achievable dense rate).
void merge_gemm_rates(const nlohmann::json& d, GpuInfo& g, ProbeReport& report) {
    for (const auto& gm : d.value("gemm", nlohmann::json::array())) {
        std::string dtype = gm.value("dtype", std::string());
        std::string shape = fmt::format("{} {}x{}x{}", dtype, gm.value("m", 0), gm.value("n", 0), gm.value("k", 0));
        if (gm.contains("error")) {
            report.warnings.push_back(fmt::format("gpu{}: gemm {} failed: {}", g.index, shape, gm.value("error", std::string())));
            continue;
        }
        auto m = samples_at(gm, "tflops");
        if (!m) continue;
        g.gemm_shapes.emplace_back(shape, *m);
        std::optional<Measurement>* slot = dtype == "fp32" ? &g.tflops.fp32 : dtype == "tf32" ? &g.tflops.tf32
                                         : dtype == "bf16" ? &g.tflops.bf16 : dtype == "fp16" ? &g.tflops.fp16
                                         : dtype == "fp8"  ? &g.tflops.fp8 : nullptr;
        if (slot && (!*slot || (*slot)->median() < m->median())) *slot = *m;
    }
}

void merge_cuda_device(const nlohmann::json& d, ProbeReport& report) {
    GpuInfo& g = gpu_for_cuda_device(d, report);
    g.index = d.value("index", -1);  // CUDA's numbering, which peer copies and NCCL results use
    g.h2d_GBps = samples_at(d, "h2d_pinned_GBps");
    g.d2h_GBps = samples_at(d, "d2h_pinned_GBps");
    g.h2d_pageable_GBps = samples_at(d, "h2d_pageable_GBps");
    g.d2h_pageable_GBps = samples_at(d, "d2h_pageable_GBps");
    g.hbm_GBps = samples_at(d, "d2d_GBps");
    g.h2d_latency_us = samples_at(d, "h2d_latency_us");
    merge_gemm_rates(d, g, report);
}

void merge_peer_copies(const nlohmann::json& doc, ProbeReport& report) {
    for (const auto& p : doc.value("peer", nlohmann::json::array())) {
        auto m = samples_at(p, "GBps");
        if (!m) {
            if (p.contains("error"))
                report.warnings.push_back(fmt::format("gpu{}->gpu{}: copy failed: {}", p.value("src", -1), p.value("dst", -1),
                                                      p.value("error", std::string())));
            continue;
        }
        report.peer_copies.push_back({p.value("src", 0), p.value("dst", 0), p.value("peer_access", false), *m});
    }
}

}  // namespace

void merge_cuda_probe_json(const std::string& text, ProbeReport& report) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) throw InternalError("CUDA probe returned malformed JSON");
    if (doc.contains("error") && doc["error"].is_string())
        report.warnings.push_back("gpu: CUDA probe stopped early: " + doc["error"].get<std::string>());
    for (const auto& d : doc.value("devices", nlohmann::json::array())) merge_cuda_device(d, report);
    merge_peer_copies(doc, report);
    for (const auto& c : doc.value("nccl", nlohmann::json::array())) {
        auto m = samples_at(c, "busbw_GBps");
        if (!m) continue;
        report.collectives.push_back({c.value("op", std::string()), c.value("bytes", 0.0), c.value("gpus", 0), *m});
    }
    if (doc.contains("nccl_skipped") && doc["nccl_skipped"].is_string())
        report.skipped.push_back("nccl: " + doc["nccl_skipped"].get<std::string>());
}

CudaProbeResult run_cuda_probe(ProbeReport& report, bool quick) {
    CudaProbeResult r;
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("FTBOUND_CUDA_PROBE"); env && *env) candidates.emplace_back(env);
    std::string dir = exe_dir();
    if (!dir.empty()) {
        candidates.push_back(dir + "/libftbound_cuda_probe.so");
        candidates.push_back(dir + "/../lib/libftbound_cuda_probe.so");
    }
    candidates.emplace_back("libftbound_cuda_probe.so");
    void* lib = nullptr;
    std::string last_error;
    for (const auto& c : candidates) {
        lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            r.library_path = c;
            break;
        }
        if (const char* e = dlerror()) last_error = e;
    }
    if (!lib) {
        r.skipped_reason = "CUDA probe library not found (build with nvcc on PATH, or set FTBOUND_CUDA_PROBE): " + last_error;
        return r;
    }
    auto abi = reinterpret_cast<int (*)()>(dlsym(lib, "ftb_cuda_probe_abi"));
    auto run = reinterpret_cast<char* (*)(int)>(dlsym(lib, "ftb_cuda_probe_run"));
    auto release = reinterpret_cast<void (*)(char*)>(dlsym(lib, "ftb_cuda_probe_free"));
    if (!abi || !run || !release || abi() != FTB_CUDA_PROBE_ABI) {
        r.skipped_reason = "CUDA probe library " + r.library_path + " has another interface version";
        return r;
    }
    char* json = run(quick ? 1 : 0);
    if (!json) {
        r.skipped_reason = "CUDA probe returned nothing (out of host memory?)";
        return r;
    }
    std::string text(json);
    release(json);
    merge_cuda_probe_json(text, report);
    r.ran = true;
    return r;
}

}  // namespace ftb::probe
