// The price a plan uses for one node-hour: the job's own (ops.price_per_gpu_hour on a GPU server, else
// ops.price_per_node_hour), else the catalog's for the system (data/prices/), else none.
#pragma once
#include <optional>

#include "ftbound/job_spec.hpp"
#include "ftbound/price.hpp"
#include "ftbound/system_spec.hpp"

namespace ftb {

std::optional<NodePrice> node_price(const OpsSpec& ops, const SystemSpec& system);

}  // namespace ftb
