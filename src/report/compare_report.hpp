// Printers for `ftbound compare`: the contract's JSON document ({"rows": [...]}) and the aligned text table.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ops/compare.hpp"

namespace ftb {

nlohmann::ordered_json compare_json(const std::vector<CompareRow>& rows);
std::string compare_text(const std::vector<CompareRow>& rows);

}  // namespace ftb
