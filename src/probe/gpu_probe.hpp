// GPU facts through NVML and GPU measurements through libftbound_cuda_probe.so, both loaded with
// dlopen so that ftbound needs neither a driver nor CUDA to build or run.
#pragma once
#include <string>
#include <vector>

#include "probe/probe_types.hpp"

namespace ftb::probe {

struct NvmlResult {
    bool available = false;     // libnvidia-ml loaded and initialised
    std::string skipped_reason; // why not
    std::vector<GpuInfo> gpus;
};

// Name, memory, power limit, clocks, throttle reasons, PCIe link, ECC counts of every GPU.
NvmlResult read_nvml();

// Names of the throttle (clock-event) reasons set in an NVML bitmask; GPU idle and the application
// clock setting are left out: they are not slowdowns.
std::vector<std::string> throttle_reason_names(uint64_t mask);

struct CudaProbeResult {
    bool ran = false;
    std::string skipped_reason;
    std::string library_path;
};

// Loads the CUDA probe library ($FTBOUND_CUDA_PROBE, next to the ftbound binary, or the loader's
// search path), runs it and merges its measurements into `report` (GPUs matched by PCI bus id).
CudaProbeResult run_cuda_probe(ProbeReport& report, bool quick);

// Merges the JSON document the CUDA probe library returns (cuda_probe_api.h) into `report`.
// Exposed for tests; throws ftb::InternalError on a document that does not follow the interface.
void merge_cuda_probe_json(const std::string& json, ProbeReport& report);

}  // namespace ftb::probe
