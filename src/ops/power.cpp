// Power model: see power.hpp and docs/operations.md ("Power").
#include "ops/power.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ftb {
namespace {

// Energy to move one bit, joules.
// HBM: about 3.9 pJ/bit for HBM2, the most efficient high-bandwidth DRAM of its day (O'Connor et al.,
// "Fine-Grained DRAM: Energy-Efficient DRAM for Extreme Bandwidth Systems", MICRO-50, 2017). Used for
// every HBM generation: later stacks trade lower voltage for higher rates at a similar energy per bit.
constexpr double kHbmJoulesPerBit = 3.9e-12;
// Off-package SerDes links (NVLink to an NVSwitch, PCIe): 5.5 pJ/bit; package-level NVLink-C2C:
// 1.3 pJ/bit. Both from NVIDIA's NVLink-C2C comparison (Hot Chips 2023 / NVIDIA "What is NVLink?"
// blog: C2C "consumes just 1.3 picojoules per bit", ~5x better than PCIe Gen 5 SerDes).
constexpr double kSerdesJoulesPerBit = 5.5e-12;
constexpr double kC2cJoulesPerBit = 1.3e-12;
// Memory + links may take at most this share of the dynamic range, so that a catalog device with an
// odd TDP keeps a compute share (a guard on inputs, not a physical constant).
constexpr double kMaxDataMovementShare = 0.5;

double clamp01(double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; }

double dense_peak_tflops(const DeviceSpec& d) {
    if (d.peak_tflops.bf16 > 0) return d.peak_tflops.bf16;
    if (d.peak_tflops.fp16 > 0) return d.peak_tflops.fp16;
    return d.peak_tflops.fp32;
}

double dynamic_range_w(const DeviceSpec& d) { return std::max(0.0, d.tdp_w - d.idle_w); }

}  // namespace

DevicePowerSplit device_power_split(const DeviceSpec& dev, double link_GBps_per_direction) {
    DevicePowerSplit s;
    const double dynamic_w = dynamic_range_w(dev);
    if (dev.kind == DeviceKind::gpu) {
        s.memory_w = dev.memory_bandwidth_GBps * 1e9 * 8 * kHbmJoulesPerBit;
        const double per_bit = dev.host_link == "nvlink-c2c" ? kC2cJoulesPerBit : kSerdesJoulesPerBit;
        s.link_w = std::max(0.0, link_GBps_per_direction) * 2 * 1e9 * 8 * per_bit;
        const double data_w = s.memory_w + s.link_w;
        const double limit_w = kMaxDataMovementShare * dynamic_w;
        if (data_w > limit_w && data_w > 0) {
            s.memory_w *= limit_w / data_w;
            s.link_w *= limit_w / data_w;
        }
    }
    // A CPU socket's TDP covers cores and uncore; its DIMMs are part of node_base_power_w.
    s.compute_w = dynamic_w - s.memory_w - s.link_w;
    return s;
}

double device_power_w(const DeviceSpec& dev, const DevicePowerSplit& split, double compute_utilisation,
                      double memory_utilisation, double link_utilisation) {
    const double w = dev.idle_w + split.compute_w * clamp01(compute_utilisation) +
                     split.memory_w * clamp01(memory_utilisation) + split.link_w * clamp01(link_utilisation);
    return std::min(w, std::max(dev.tdp_w, dev.idle_w));
}

double power_capped_rate_factor(const DeviceSpec& dev, double cap_w, double demand_w) {
    if (!(cap_w < demand_w)) return 1.0;  // the cap does not bind (also catches NaN)
    if (cap_w <= dev.idle_w) return 0.0;
    const double dynamic_demand_w = demand_w - dev.idle_w;
    if (dynamic_demand_w <= 0) return 1.0;
    return std::cbrt((cap_w - dev.idle_w) / dynamic_demand_w);
}

double power_capped_rate_factor(const DeviceSpec& dev, double cap_w) {
    return power_capped_rate_factor(dev, cap_w, dev.tdp_w);
}

double power_demand_at_peak_w(const DeviceSpec& part, const DeviceSpec& reference) {
    const double part_peak = dense_peak_tflops(part), ref_peak = dense_peak_tflops(reference);
    if (part.sm_count <= 0 || reference.sm_count <= 0 || part_peak <= 0 || ref_peak <= 0)
        return part.tdp_w;  // nothing to scale from: the part's own rating is all we know
    const double sm_ratio = double(part.sm_count) / reference.sm_count;
    const double clock_ratio = (part_peak / part.sm_count) / (ref_peak / reference.sm_count);
    return part.idle_w + dynamic_range_w(reference) * sm_ratio * clock_ratio * clock_ratio * clock_ratio;
}

double sustained_rate_factor(const DeviceSpec& part, const DeviceSpec& reference) {
    return power_capped_rate_factor(part, part.tdp_w, power_demand_at_peak_w(part, reference));
}

PowerDraw node_power(const SystemSpec& sys, double compute_utilisation, double memory_utilisation,
                     double link_utilisation) {
    PowerDraw p;
    const DeviceSpec& dev = sys.device;
    const int devices = std::max(0, sys.devices_per_node);

    // The links of GPU 0 (all GPUs of a node are wired alike): host link and fabric, per direction.
    double link_GBps = 0;
    if (!sys.cpu_only) {
        const int gpu0 = sys.gpu_component(0);
        for (const TopologyLink& l : sys.links)
            if (gpu0 >= 0 && (l.a == gpu0 || l.b == gpu0)) link_GBps += l.link.bandwidth_GBps;
    }
    const DevicePowerSplit split = device_power_split(dev, link_GBps);
    p.device_w = device_power_w(dev, split, compute_utilisation, memory_utilisation, link_utilisation);
    p.node_w = p.device_w * devices + sys.node_base_power_w;

    const PowerSupplies& psu = sys.power;
    p.psu_known = psu.count > 0 && psu.watts_each > 0;
    if (!p.psu_known) return p;
    const int redundant = std::clamp(psu.redundant, 0, psu.count - 1);
    p.psu_capacity_w = psu.count * psu.watts_each;
    p.psu_capacity_after_failure_w = (psu.count - redundant) * psu.watts_each;
    // Supplies needed to carry node_w (a hair of tolerance so an exact multiple is not rounded up).
    const int needed = static_cast<int>(std::ceil(p.node_w / psu.watts_each - 1e-9));
    p.exceeds_capacity = p.node_w > p.psu_capacity_w;
    p.psu_failures_tolerated = std::max(0, psu.count - std::max(needed, 0));
    p.exceeds_redundant_capacity = p.node_w > p.psu_capacity_after_failure_w;

    // Rate of the devices when the base load is served first and the devices share what is left.
    auto rate_within = [&](double supply_w) {
        if (devices == 0) return supply_w >= p.node_w ? 1.0 : 0.0;
        const double per_device_w = (supply_w - sys.node_base_power_w) / devices;
        return power_capped_rate_factor(dev, per_device_w, p.device_w);
    };
    const std::string supplies = fmt::format("{} x {:.0f} W supplies ({})", psu.count, psu.watts_each,
                                             psu.redundancy);
    if (p.exceeds_redundant_capacity) p.throttle_factor = rate_within(p.psu_capacity_after_failure_w);
    if (p.exceeds_capacity) {
        p.sustained_factor = rate_within(p.psu_capacity_w);
        p.note = fmt::format("node draws {:.0f} W, more than all {} carry ({:.0f} W): the devices run power-"
                             "limited at {:.1f}% of their rate",
                             p.node_w, supplies, p.psu_capacity_w, 100 * p.sustained_factor);
    } else if (p.exceeds_redundant_capacity) {
        p.note = p.throttle_factor > 0
                     ? fmt::format("node draws {:.0f} W; after losing {} of {} the rest carry {:.0f} W: "
                                   "the devices throttle to {:.1f}% of their rate",
                                   p.node_w, redundant, supplies, p.psu_capacity_after_failure_w,
                                   100 * p.throttle_factor)
                     : fmt::format("node draws {:.0f} W; after losing {} of {} the rest carry {:.0f} W, "
                                   "less than the base load with idle devices: the node goes down",
                                   p.node_w, redundant, supplies, p.psu_capacity_after_failure_w);
    }
    return p;
}

}  // namespace ftb
