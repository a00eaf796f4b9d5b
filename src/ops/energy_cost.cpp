// Energy and cost: see energy_cost.hpp and docs/operations.md ("Energy and cost").
#include "ops/energy_cost.hpp"

#include <algorithm>

#include "ftbound/error.hpp"

namespace ftb {

EnergyCost energy_and_cost(double job_seconds, double node_w, int nodes, const OpsSpec& ops,
                           const std::optional<NodePrice>& price) {
    FTB_ASSERT(job_seconds >= 0 && node_w >= 0 && nodes >= 0);
    EnergyCost e;
    const double hours = job_seconds / 3600.0;
    e.it_energy_kwh = node_w * nodes * hours / 1000.0;
    // PUE = facility energy / IT equipment energy (The Green Grid, White Paper #49), so the meter sees
    // IT energy x PUE.
    e.energy_kwh = e.it_energy_kwh * std::max(1.0, ops.pue);
    e.energy_cost = e.energy_kwh * std::max(0.0, ops.electricity_per_kwh);
    if (price) {
        e.compute_cost = price->per_node_hour * nodes * hours;
        e.total_cost = *e.compute_cost + (price->includes_power ? 0.0 : e.energy_cost);
    }
    return e;
}

}  // namespace ftb
