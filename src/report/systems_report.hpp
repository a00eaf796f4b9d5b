// The `systems` section of `ftbound catalog`: the buyer's view of every catalog server (GPUs, GPU fabric and
// NCCL's ring bandwidth over it, NICs and each GPU's share, supplies, power at full load) as a text table,
// and in JSON the same plus the whole topology (components, links) and the sources of every figure.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "spec/catalog.hpp"

namespace ftb {

// The text table; one JSON entry per system is appended to `entries`.
std::string systems_section(const Catalog& cat, nlohmann::ordered_json& entries);

}  // namespace ftb
