// One job on several systems side by side (CONTRACT.md `compare`): the same model, method, sequence and global
// batch; the layout adapted to what each system has (its GPUs or sockets, its node count), the fastest layout
// that fits chosen, and every change said. Each row is priced at the system's own price (the job's, the
// catalog's or --price) and carries cost and energy per million tokens.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/plan.hpp"
#include "spec/document.hpp"

namespace ftb {

struct CompareOptions {
    std::vector<std::string> systems;            // in the order given
    std::vector<int> nodes;                      // node counts to sweep; empty = the job's own
    std::map<std::string, double> price_per_node_hour;   // --price NAME=PER_HOUR
};

struct CompareRow {
    std::string system;
    int nodes = 1;
    std::optional<Job> job;            // empty when the job cannot run on this system (see `error`)
    std::optional<Plan> plan;
    std::string error;
    std::vector<std::string> adapted;  // what was changed to run the job here
    std::optional<double> cost_per_million_tokens;
    std::optional<double> energy_kwh_per_million_tokens;
};

std::vector<CompareRow> compare_systems(const Json& job_document, const std::string& job_file,
                                        const CompareOptions& options);
// The job's own node count, no price overrides.
std::vector<CompareRow> compare_systems(const Json& job_document, const std::string& job_file,
                                        const std::vector<std::string>& systems);

// "a,b,c" -> {a, b, c} (empty items dropped).
std::vector<std::string> split_system_list(const std::string& list);

// Cost and energy per million trained tokens: the whole job's (with its failures and checkpoints) when
// data.tokens is given, else one step's at the node price and draw.
std::optional<double> cost_per_million_tokens(const Job& job, const Plan& plan);
double energy_kwh_per_million_tokens(const Job& job, const Plan& plan);

}  // namespace ftb
