// `ftbound probe`: measure this machine (host, storage, PCIe, GPUs) and print or write the results.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "probe/probe_types.hpp"

namespace ftb::probe {

struct ProbeOptions {
    std::string sysfs_root = "/";   // where /proc and /sys are read (tests point it at a fixture tree)
    std::string storage_dir = ".";  // the folder whose filesystem is measured
    bool quick = false;             // smaller problems, fewer repetitions
    bool gpu = true;                // false: skip NVML and CUDA entirely
    bool host_bench = true;
    bool storage = true;
    int threads = 0;                // 0: every CPU the process may run on
    bool torch = false;             // time PyTorch's per-op cost through python3 (needs torch installed)
    std::string python = "python3"; // the interpreter that has torch
};

ProbeReport run_probe(const ProbeOptions& opt);

// CONTRACT.md's `probe --json` document (host.*, storage.*, gpus[], warnings[], samples), plus extras.
nlohmann::json to_json(const ProbeReport& r);

// The text form: a table per device (host, storage, each GPU), then PCIe devices and warnings.
std::string to_text(const ProbeReport& r);

// A system file in data/README.md's systems/ format, composed from what was measured, with
// `measured_fields` naming the figures that came from this probe rather than a datasheet.
std::string to_system_yaml(const ProbeReport& r);

// The catalog GPU name an NVML/CUDA device name corresponds to ("NVIDIA H100 80GB HBM3" -> "h100-sxm");
// empty when it is not one the catalog names.
std::string catalog_gpu_name(const std::string& device_name, double memory_bytes);

}  // namespace ftb::probe
