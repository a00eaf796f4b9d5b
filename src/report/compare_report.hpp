// Printers for `ftbound compare`: the contract's JSON document ({"rows": [...]}), the aligned text table with
// its notes (what was adapted, the price each row used, why a row does not fit), and CSV.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ops/compare.hpp"

namespace ftb {

nlohmann::ordered_json compare_json(const std::vector<CompareRow>& rows);
std::string compare_text(const std::vector<CompareRow>& rows);
std::string compare_csv(const std::vector<CompareRow>& rows);

}  // namespace ftb
