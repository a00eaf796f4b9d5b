// Printers for a plan: the contract's JSON document and the terminal report.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ftbound/plan.hpp"

namespace ftb {

nlohmann::ordered_json memory_json(const MemoryResult& m);
nlohmann::ordered_json memory_walk_json(const MemoryWalk& walk);
nlohmann::ordered_json plan_json(const Job& job, const Plan& plan);
nlohmann::ordered_json price_json(const std::optional<NodePrice>& price);   // null when no price is known
nlohmann::ordered_json storage_json(const OperationsResult& ops);
std::string plan_text(const Job& job, const Plan& plan);
std::string memory_verdict(const Job& job, const MemoryResult& m);

}  // namespace ftb
