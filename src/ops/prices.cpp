#include "ops/prices.hpp"

#include "spec/catalog.hpp"

namespace ftb {

std::optional<NodePrice> node_price(const OpsSpec& ops, const SystemSpec& sys) {
    NodePrice p;
    if (ops.price_per_gpu_hour && !sys.cpu_only) {
        // GPU-hours of the GPUs the job holds on each node.
        p.per_node_hour = *ops.price_per_gpu_hour * sys.devices_per_node;
        p.basis = "ops.price_per_gpu_hour";
        return p;
    }
    if (ops.price_per_node_hour) {
        p.per_node_hour = *ops.price_per_node_hour;
        p.basis = "ops.price_per_node_hour";
        return p;
    }
    return Catalog::instance().price(sys.name);
}

}  // namespace ftb
