// What a node costs per hour (data/prices/): an hourly list price for renting a comparable node, or a purchase
// price amortised over its years of service (electricity then priced separately from the energy the plan
// predicts). Every price carries its source and date.
#pragma once
#include <string>
#include <vector>

namespace ftb {

struct NodePrice {
    double per_node_hour = 0;       // currency units per node-hour
    bool includes_power = false;    // an all-in rental price: the job's electricity is not added on top
    std::string basis;              // "hourly list price" | "amortised purchase" | "--price" | "ops.price_per_node_hour" ...
    std::string currency;           // e.g. USD
    std::string date;               // when the price was listed
    std::string comparable;         // what was priced, when it is not this exact system
    std::vector<std::string> sources;
};

}  // namespace ftb
