// One job on several systems side by side (CONTRACT.md `compare`): the same model, method and global batch;
// the parallel layout adapted where a system forces it (data parallel over its GPUs; CPU servers data
// parallel over their sockets).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ftbound/plan.hpp"
#include "spec/document.hpp"

namespace ftb {

struct CompareRow {
    std::string system;
    std::optional<Job> job;            // empty when the job cannot run on this system (see `error`)
    std::optional<Plan> plan;
    std::string error;
    std::vector<std::string> adjustments;   // what had to change for this system
};

// "a,b,c" -> {a, b, c} (empty items dropped).
std::vector<std::string> split_system_list(const std::string& list);

std::vector<CompareRow> compare_systems(const Json& job_document, const std::string& job_file,
                                        const std::vector<std::string>& systems);

}  // namespace ftb
