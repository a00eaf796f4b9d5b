// Energy and cost of a whole job (DESIGN.md §5 "Cost and energy"). Pure functions, no I/O.
// See docs/operations.md ("Energy and cost").
#pragma once
#include <optional>

#include "ftbound/job_spec.hpp"

namespace ftb {

struct EnergyCost {
    double it_energy_kwh = 0;             // what the nodes draw: node_w x nodes x hours / 1000
    double energy_kwh = 0;                // at the facility meter: it_energy_kwh x PUE
    double energy_cost = 0;               // energy_kwh x electricity_per_kwh
    std::optional<double> compute_cost;   // GPU-hours x price_per_gpu_hour (GPU servers), or
                                          // node-hours x price_per_node_hour; empty when no price applies
    std::optional<double> total_cost;     // compute_cost + energy_cost; empty when compute_cost is
};

// `job_seconds`: wall time the machines are held (include the time reliability() says is lost).
// GPU servers use price_per_gpu_hour, else price_per_node_hour; CPU servers (`cpu_only`) use
// price_per_node_hour only. A cloud price already includes power: set electricity_per_kwh to 0 there.
EnergyCost energy_and_cost(double job_seconds, double node_w, int nodes, int gpus, const OpsSpec& ops,
                           bool cpu_only);

}  // namespace ftb
