// What `ftbound probe` measures, as plain structs: every measured figure keeps the raw samples
// (one per repetition) next to its summary (the median), so printers can show both.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/contention.hpp"

namespace ftb::probe {

// One measured figure: the median of its repetitions, and every repetition.
struct Measurement {
    std::vector<double> samples;
    double median() const;                      // 0 when there are no samples
    bool valid() const { return !samples.empty(); }
    double relative_spread() const;             // (max - min) / median of the samples; 0 with fewer than two
};
Measurement measurement_of(std::vector<double> samples);

// A PCIe function read from sysfs (/sys/bus/pci/devices/<address>/).
struct PciDevice {
    std::string address;          // e.g. "0000:17:00.0"
    uint32_t class_code = 0;      // 24-bit class code, e.g. 0x030200 (3D controller)
    uint16_t vendor_id = 0;
    uint16_t device_id = 0;
    int numa_node = -1;           // -1: the platform does not say
    int link_gen = 0;             // 0: no link information (virtual or root-complex-integrated function)
    int link_width = 0;
    int max_link_gen = 0;
    int max_link_width = 0;
    bool is_gpu() const;          // display or 3D controller of a GPU vendor (NVIDIA, AMD, Intel accelerators)
    bool is_nic() const;          // Ethernet or InfiniBand controller
    bool is_nvme() const;
    bool link_downtrained() const;  // trained below the maximum generation or width the device supports
};

struct HostInfo {
    std::string cpu_model;
    std::string vendor;           // intel | amd | arm | the vendor_id as read
    int sockets = 0;
    int cores = 0;                // physical cores, all sockets
    int logical_cpus = 0;
    int numa_nodes = 0;
    double memory_bytes = 0;
    double max_ghz = 0;           // 0 when cpufreq does not say
    bool has_avx512_bf16 = false;
    bool has_amx_bf16 = false;
    std::vector<int> numa_node_socket;  // socket of each NUMA node (index = node id)
};

struct GemmRate {
    Measurement tflops;           // samples in TFLOP/s
    std::string method;           // what ran it (e.g. "openblas sgemm", "avx512-bf16 kernel")
    int size = 0;                 // square matrix size n (n x n x n)
};

// The threading and BLAS the host benchmarks ran with: what a training framework started the same way gets.
struct Threading {
    std::string threads_from;                          // --threads | OMP_NUM_THREADS | every allowed CPU
    std::vector<std::pair<std::string, std::string>> environment;  // OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, ... as set
    std::string blas_library;   // the shared object cblas_sgemm came from
    std::string blas_config;    // openblas_get_config(), where the BLAS is OpenBLAS
    int blas_threads = 0;       // openblas_get_num_threads() after the probe set it (0: unknown)
    std::string blas_threading; // sequential | pthreads | openmp (openblas_get_parallel), empty when unknown
};

struct HostBench {
    int threads = 0;
    Threading threading;
    double array_bytes = 0;       // per triad array
    Measurement memory_bandwidth_GBps;   // triad: 3 x 8 bytes per element (2 read, 1 written)
    std::optional<GemmRate> fp32;
    std::optional<GemmRate> bf16;        // the rate bf16 matmuls run at (converted to fp32 where there are no bf16 units)
    bool bf16_native = false;            // bf16 matrix units (AVX512-BF16, AMX) or the BLAS's sbgemm ran it
    std::string bf16_skipped_reason;
    Measurement first_touch_GBps;        // writing freshly mmapped pages (page faults + zeroing), all threads
    std::optional<Measurement> torch_op_us;   // PyTorch eager per-op host time; absent without python3 + torch
    double torch_runtime_rss_bytes = 0;       // RSS of python3 after `import torch` (0: not measured)
    std::optional<Measurement> torch_blas_switch_us;   // extra time per GEMM call between OpenMP-parallel ops
    std::string torch_skipped_reason;
};

struct StorageBench {
    std::string dir;
    bool measured = false;
    std::string skipped_reason;   // why not measured (e.g. the filesystem refuses O_DIRECT)
    double file_bytes = 0;
    double block_bytes = 0;
    int io_threads = 0;
    Measurement read_GBps;
    Measurement write_GBps;
    double page_cache_resident_fraction = 0;  // of the test file after the run (0: nothing went through the cache)
};

struct GpuTflops {
    std::optional<Measurement> fp32, tf32, bf16, fp16, fp8;
};

// One GPU: NVML facts and, when the CUDA probe library ran, measured rates.
struct GpuInfo {
    int index = 0;
    std::string name;
    std::string pci_address;      // NVML's bus id, lower-case, domain 0000:..
    double memory_bytes = 0;
    double power_limit_w = 0;
    double sm_clock_mhz = 0, sm_clock_max_mhz = 0, mem_clock_mhz = 0;
    uint64_t throttle_reasons = 0;          // NVML clock-event bitmask
    std::vector<std::string> throttle_names;
    int pcie_gen = 0, pcie_width = 0, pcie_max_gen = 0, pcie_max_width = 0;
    std::optional<uint64_t> ecc_corrected, ecc_uncorrected;  // volatile counts, absent where ECC is off
    int numa_node = -1;
    std::optional<Measurement> h2d_GBps, d2h_GBps, h2d_pageable_GBps, d2h_pageable_GBps, hbm_GBps;
    std::optional<Measurement> h2d_latency_us;
    GpuTflops tflops;
    std::vector<std::pair<std::string, Measurement>> gemm_shapes;  // "bf16 8192x8192x8192" -> TFLOP/s
};

struct PeerCopy {
    int src = 0, dst = 0;
    bool peer_access = false;     // direct GPU-to-GPU path (NVLink or PCIe peer-to-peer); false: staged through the host
    Measurement GBps;
};

struct Collective {
    std::string op;               // all_reduce | all_gather
    double bytes = 0;
    int gpus = 0;
    Measurement busbw_GBps;       // nccl-tests definition
};

struct ProbeReport {
    std::string hostname;
    HostInfo host;
    HostBench host_bench;
    StorageBench storage;
    std::vector<PciDevice> pci_devices;
    std::vector<GpuInfo> gpus;
    std::vector<PeerCopy> peer_copies;
    std::vector<Collective> collectives;
    std::vector<std::string> warnings;
    std::vector<std::string> skipped;   // checks not run, and why (no GPU, no driver, ...)
    Contention contention;              // other work on the probe's CPUs while the host and storage were measured
    double wall_seconds = 0;
};

}  // namespace ftb::probe
