// SystemSpec: the hardware a job runs on, as a topology graph (DESIGN.md §2).
// Components (GPUs, CPU sockets, PCIe switches, NICs, NVSwitches, NVMe drives) joined by links.
// Each link has a per-direction bandwidth; flows routed over the same link share it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ftb {

// Dense peak rates of one device, in TFLOP/s (1e12 FLOP/s), without structured sparsity.
struct PeakTflops {
    double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0;
};

enum class DeviceKind { gpu, cpu };

// The best matmul rate measured on a device over a sweep of shapes, and the dense peak the measurement was taken
// against (validation/microbench.csv rows; data/devices/gpus/*.yaml `matmul_ceiling`). The timing model runs
// every GEMM at catalog peak x measured / peak x shape efficiency. measured_tflops 0 = no measurement.
struct MatmulCeiling {
    double measured_tflops = 0;
    double peak_tflops = 0;
    std::string row;                  // the microbench row (and, for a borrowed row, whose it is)
};

// A compute device: a GPU, or a CPU socket used as the compute device of a CPU server.
struct DeviceSpec {
    std::string name;                 // catalog name, e.g. "h100-sxm"
    DeviceKind kind = DeviceKind::gpu;
    std::string vendor;               // nvidia | amd | intel
    double memory_bytes = 0;          // HBM (GPU) or, for a CPU, 0: host memory belongs to the system
    double memory_bandwidth_GBps = 0; // HBM, or a CPU socket's DDR peak
    PeakTflops peak_tflops;
    int sm_count = 0;                 // streaming multiprocessors / compute units / CPU cores
    double tdp_w = 0;                 // board power limit
    double idle_w = 0;
    std::string host_link;            // link name of the host interface (pcie4, pcie5, nvlink-c2c)
    double cuda_context_bytes = 0;    // driver + runtime context footprint (GPU)
    MatmulCeiling matmul_ceiling_bf16;  // 16-bit tensor-core GEMMs (fp16, tf32 and fp32 use it when they have none)
    MatmulCeiling matmul_ceiling_fp8;   // fp8 GEMMs (none: the bf16 one)
    // CPU-only fields
    int cores = 0;
    double base_ghz = 0;
    int memory_channels = 0;
    // CPU rates of PyTorch on this machine, measured (a probed system file); 0 where not measured.
    double op_overhead_us = 0;        // host time per eager PyTorch op, forward with autograd recording + its backward
    // One core streaming from DRAM, GB/s: a core's outstanding cache-line misses over the memory latency (Little's
    // law; McCalpin 2023/2025), far below the socket's peak. 0 = unknown (a CPU step then shares the sockets).
    double core_memory_bandwidth_GBps = 0;
    double first_touch_GBps = 0;      // writing freshly mapped pages (page faults + kernel zeroing), GB/s
    double runtime_rss_bytes = 0;     // resident set of a process that has imported torch, before any model
    double blas_switch_us = 0;        // extra time per GEMM call between OpenMP-parallel ops, when the BLAS runs its own
                                      // thread pool beside PyTorch's OpenMP one (the two take turns on the cores)
    // The tflops / memory_bandwidth_GBps above are achieved rates measured by `ftbound probe` (BLAS sgemm, triad),
    // not datasheet peaks: no fraction of peak is applied to them again.
    bool tflops_measured = false;
    bool bandwidth_measured = false;
    // A GPU held to a board power limit below its part's rating (a variant lowering its base's tdp_w:
    // spec/power_capped_peaks.hpp): the rating it is held below and the tensor-core clock the limit sustains, as a
    // fraction of the rated part's (the peaks above already carry it). 0 and 1: not capped.
    double rated_tdp_w = 0;
    double power_clock_fraction = 1;
};

// A kind of wire: bandwidth per direction, latency, and the fraction a real transfer achieves.
struct LinkSpec {
    std::string name;                  // e.g. "pcie5", "nvlink4", "upi-2.0"
    double bandwidth_GBps = 0;         // per direction, of one instance of this link
    double latency_us = 0;
    double achievable_fraction = 1.0;  // measured/peak for large transfers
};

// A fabric between nodes, per GPU's NIC.
struct NetworkSpec {
    std::string name;                  // e.g. "ib-ndr-400"
    double bandwidth_GBps = 0;         // per NIC, per direction
    double latency_us = 0;
    double achievable_fraction = 1.0;
};

enum class ComponentKind { gpu, cpu_socket, pcie_switch, nic, nvswitch, nvme };

struct Component {
    std::string id;                   // unique within the system, e.g. "gpu0", "cpu1", "sw2"
    ComponentKind kind = ComponentKind::gpu;
    int socket = 0;                   // NUMA socket it hangs off
};

struct TopologyLink {
    int a = 0, b = 0;                 // indices into SystemSpec::components
    LinkSpec link;                    // the wire (count folded into bandwidth)
};

struct PowerSupplies {
    int count = 0;
    double watts_each = 0;
    int redundant = 0;                // supplies that may fail with the node still fully powered (n+1: 1, n+n: count/2)
    std::string redundancy = "none";  // as written: none | n+1 | n+2 | n+n
};

struct StorageSpec {
    double read_GBps = 0;
    double write_GBps = 0;
};

struct SystemSpec {
    std::string name;                 // catalog name or file path
    std::string vendor;
    std::string form_factor;          // chassis and GPU packaging as the vendor names it, e.g. "6U, 8x SXM5 on HGX"
    DeviceSpec device;                // the compute device (all GPUs of a node are the same part)
    int devices_per_node = 0;         // GPUs per node; for a CPU server the number of sockets
    bool cpu_only = false;            // a CPU server: compute runs on the sockets
    DeviceSpec host_cpu;              // the host CPU part (its DDR bandwidth, cores, AMX rate)
    int sockets = 0;
    double host_memory_bytes = 0;
    std::vector<Component> components;
    std::vector<TopologyLink> links;
    NetworkSpec inter_node;           // per-GPU NIC fabric to other nodes
    int nodes = 1;
    PowerSupplies power;
    double node_base_power_w = 0;     // CPUs, fans, DIMMs, NICs, drives at load (without the GPUs)
    StorageSpec local_storage;        // NVMe array of the node
    std::vector<std::string> measured_fields;  // figures taken from `ftbound probe`, not datasheets
    std::vector<std::string> sources;          // where the figures come from

    int total_devices() const { return devices_per_node * nodes; }
    int gpu_component(int local_rank) const;   // component index of GPU `local_rank`, -1 if none
};

}  // namespace ftb
