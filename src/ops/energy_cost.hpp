// Energy and cost of a whole job (DESIGN.md §5 "Cost and energy"). Pure functions, no I/O.
// See docs/operations.md ("Energy and cost").
#pragma once
#include <optional>

#include "ftbound/job_spec.hpp"
#include "ftbound/price.hpp"

namespace ftb {

struct EnergyCost {
    double it_energy_kwh = 0;             // what the nodes draw: node_w x nodes x hours / 1000
    double energy_kwh = 0;                // at the facility meter: it_energy_kwh x PUE
    double energy_cost = 0;               // energy_kwh x electricity_per_kwh
    std::optional<double> compute_cost;   // node-hours x the node price; empty when no price applies
    std::optional<double> total_cost;     // compute_cost, + energy_cost unless the price includes power
};

// `job_seconds`: wall time the machines are held (include the time reliability() says is lost).
// `price`: what one node costs per hour (empty = unknown); an all-in rental price (includes_power) already
// pays for the electricity, so energy_cost is then not added to the total.
EnergyCost energy_and_cost(double job_seconds, double node_w, int nodes, const OpsSpec& ops,
                           const std::optional<NodePrice>& price);

}  // namespace ftb
