// The catalog listing of `ftbound catalog` and `GET /api/catalog`: per section, an aligned text table and the
// JSON entries.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/catalog.hpp"

namespace ftb {

// models, gpus, cpus, systems, networks, links, frameworks
const std::vector<std::string>& catalog_sections();
// One section: its text table; its entries are appended to `entries` (a JSON array).
std::string catalog_section(const Catalog& cat, const std::string& section, nlohmann::ordered_json& entries);
// Every section: {"models": [...], "gpus": [...], ...}.
nlohmann::ordered_json catalog_json(const Catalog& cat);

}  // namespace ftb
