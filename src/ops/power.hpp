// Power and its limits (DESIGN.md §5 "Power and heat"): what a device and a node draw at a given
// utilisation, whether the node's power supplies carry that draw after losing their redundant units,
// and how much a power cap slows a device down. Pure functions, no I/O. See docs/operations.md.
#pragma once
#include <string>

#include "ftbound/system_spec.hpp"

namespace ftb {

// How one device's dynamic power (tdp_w - idle_w) divides between its units when each runs flat out.
// Memory and links are priced from their bandwidth and an energy per bit; compute gets the rest.
struct DevicePowerSplit {
    double compute_w = 0;  // SMs / tensor cores / CPU cores at full activity
    double memory_w = 0;   // HBM streaming at the device's peak bandwidth (0 for a CPU: DIMMs are node power)
    double link_w = 0;     // host link + GPU fabric links, both directions at full bandwidth
};

// `link_GBps_per_direction`: the device's links summed (host link + NVLink etc.), per direction.
DevicePowerSplit device_power_split(const DeviceSpec& dev, double link_GBps_per_direction);

// Draw of one device: idle + compute_w * u_compute + memory_w * u_memory + link_w * u_link.
// Utilisations are time averages over the step, clamped to [0, 1]:
//  - compute: share of wall time the SMs / cores run kernels (DCGM "SM activity"), NOT MFU: a GEMM at
//    75% of peak FLOP/s keeps the tensor cores busy and draws full compute power;
//  - memory: share of peak HBM bandwidth moved; link: share of the links' bandwidth moved.
double device_power_w(const DeviceSpec& dev, const DevicePowerSplit& split, double compute_utilisation,
                      double memory_utilisation, double link_utilisation);

struct PowerDraw {
    double device_w = 0;                       // one compute device (GPU, or CPU socket of a CPU server)
    double node_w = 0;                         // devices + node_base_power_w
    double psu_capacity_w = 0;                 // all supplies working
    double psu_capacity_after_failure_w = 0;   // after losing the `redundant` supplies
    int psu_failures_tolerated = 0;            // supplies that may fail with node_w still carried
    bool psu_known = false;                    // the system lists its supplies
    bool exceeds_capacity = false;             // node_w > all supplies: it cannot run at this load at all
    bool exceeds_redundant_capacity = false;   // node_w > what is left after the redundant supplies fail
    double throttle_factor = 1;                // device rate after that failure (1 = none, 0 = node goes down)
    double sustained_factor = 1;               // device rate with every supply working (< 1: power binds always)
    std::string note;                          // one line for reports when a limit is hit
};

// Draw of one node of `sys` at these utilisations, checked against its power supplies.
PowerDraw node_power(const SystemSpec& sys, double compute_utilisation, double memory_utilisation,
                     double link_utilisation);

// Sustained rate of a device held to `cap_w` while the work would draw `demand_w`, as a fraction of
// the uncapped rate (1 when the cap does not bind, 0 when the cap is at or below idle power).
// Model: dynamic power ~ C V^2 f with V ~ f along the top of the DVFS curve, so it goes as f^3; static
// power ~ idle_w. Rate ~ f = ((cap - idle) / (demand - idle))^(1/3).
double power_capped_rate_factor(const DeviceSpec& dev, double cap_w, double demand_w);
// Same with the demand at the device's own TDP (a part capped below its rated limit, nvidia-smi -pl).
double power_capped_rate_factor(const DeviceSpec& dev, double cap_w);

// A lower-power part of the same silicon as `reference` (H100 PCIe vs H100 SXM, A100 PCIe vs SXM):
// the draw it would need to run its own datasheet peak, scaling the reference's dynamic power
// (taken as its TDP at its peak clock) by SM count and by the per-SM clock ratio cubed.
// The per-SM clock ratio is read from the dense peaks: peak / sm_count.
double power_demand_at_peak_w(const DeviceSpec& part, const DeviceSpec& reference);
// Its sustained compute rate as a fraction of its datasheet peak: the factor its own TDP allows.
double sustained_rate_factor(const DeviceSpec& part, const DeviceSpec& reference);

}  // namespace ftb
