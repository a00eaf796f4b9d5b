// Which microarchitecture a device belongs to. DeviceSpec carries no architecture field, so it is
// inferred once from the catalog name (CONTRACT.md names), falling back on the peak rates. The cost
// models use it for per-architecture constants (GEMM tiles, NCCL tuning constants, NVLS efficiency).
// Not for hot paths: it compares strings; call it when building DeviceRates or a CommGroup.
#pragma once
#include "ftbound/system_spec.hpp"

namespace ftb {

enum class GpuArch { volta, ampere, ada, hopper, blackwell, cdna3, cdna4, gaudi, other };

GpuArch gpu_arch(const DeviceSpec& dev);
const char* to_string(GpuArch arch);

}  // namespace ftb
