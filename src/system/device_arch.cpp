#include "system/device_arch.hpp"

#include <string_view>

namespace ftb {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

struct NamePrefix {
    std::string_view prefix;
    GpuArch arch;
};

// Catalog names (CONTRACT.md "Catalog names that must resolve") and common variants. Longer
// prefixes first where one is a prefix of another ("l40" before "l4").
constexpr NamePrefix kNamePrefixes[] = {
    {"v100", GpuArch::volta},       {"a100", GpuArch::ampere},     {"a800", GpuArch::ampere},
    {"a40", GpuArch::ampere},       {"a30", GpuArch::ampere},      {"a10", GpuArch::ampere},
    {"rtx-3090", GpuArch::ampere},  {"rtx-a6000", GpuArch::ampere}, {"l40", GpuArch::ada},
    {"l4", GpuArch::ada},           {"rtx-4090", GpuArch::ada},    {"rtx-6000-ada", GpuArch::ada},
    {"h100", GpuArch::hopper},      {"h200", GpuArch::hopper},     {"gh200", GpuArch::hopper},
    {"h800", GpuArch::hopper},      {"h20", GpuArch::hopper},      {"b100", GpuArch::blackwell},
    {"b200", GpuArch::blackwell},   {"b300", GpuArch::blackwell},  {"gb200", GpuArch::blackwell},
    {"gb300", GpuArch::blackwell},  {"rtx-5090", GpuArch::blackwell}, {"mi300", GpuArch::cdna3},
    {"mi325", GpuArch::cdna3},      {"mi350", GpuArch::cdna4},     {"mi355", GpuArch::cdna4},
    {"gaudi", GpuArch::gaudi},
};

}  // namespace

GpuArch gpu_arch(const DeviceSpec& dev) {
    if (dev.kind == DeviceKind::cpu) return GpuArch::other;
    for (const auto& entry : kNamePrefixes)
        if (starts_with(dev.name, entry.prefix)) return entry.arch;
    // An inline device without a catalog name: infer from what the tensor cores support.
    // fp8 first appeared with Ada/Hopper, bf16 with Ampere; Blackwell doubled Hopper's dense rate.
    if (dev.vendor == "amd") return GpuArch::cdna3;
    if (dev.vendor == "intel") return GpuArch::gaudi;
    if (dev.vendor == "nvidia" || dev.vendor.empty()) {
        if (dev.peak_tflops.fp8 > 0) {
            if (dev.peak_tflops.bf16 > 1500) return GpuArch::blackwell;
            // HBM parts are Hopper; GDDR parts with fp8 are Ada (L40S 864 GB/s, RTX 4090 1008 GB/s).
            return dev.memory_bandwidth_GBps > 1500 ? GpuArch::hopper : GpuArch::ada;
        }
        if (dev.peak_tflops.bf16 > 0) return GpuArch::ampere;
        if (dev.peak_tflops.fp16 > 0) return GpuArch::volta;
    }
    return GpuArch::other;
}

const char* to_string(GpuArch arch) {
    switch (arch) {
        case GpuArch::volta: return "volta";
        case GpuArch::ampere: return "ampere";
        case GpuArch::ada: return "ada";
        case GpuArch::hopper: return "hopper";
        case GpuArch::blackwell: return "blackwell";
        case GpuArch::cdna3: return "cdna3";
        case GpuArch::cdna4: return "cdna4";
        case GpuArch::gaudi: return "gaudi";
        case GpuArch::other: return "other";
    }
    return "other";
}

}  // namespace ftb
