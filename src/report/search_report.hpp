// Printers for `ftbound search`: the text table, the contract's JSON ("search --json") and CSV. Each shown
// configuration is planned in full (make_plan, as `ftbound plan` would) and carries the job document that
// reproduces it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ftbound/plan.hpp"
#include "search/search.hpp"
#include "spec/document.hpp"

namespace ftb {

struct ShownConfig {
    Candidate candidate;
    std::string system;
    Job job;
    Plan plan;
    std::vector<std::pair<std::string, std::string>> changes;   // dotted path -> value, against the job as written
    Json document;                                               // the job file that plans exactly this
    std::string why;                                             // top list: why it wins over the next
};

struct SearchReport {
    std::string job_file;
    Objective objective = Objective::time;
    SearchResult result;
    size_t top_k = 0;
    std::vector<ShownConfig> top;       // up to top_k, best first
    std::vector<ShownConfig> front;     // fastest first
    std::optional<ShownConfig> nearest; // when nothing is feasible
    std::optional<ShownConfig> baseline;
    std::optional<int> baseline_rank;   // 1-based place of the job as written among the top (when it is there)
    double seconds = 0;                 // wall time of the search
    unsigned threads = 1;
    size_t systems = 1;
    size_t node_counts = 1;
};

// Plans the configurations to show. `document` is the job file as read (after --set).
SearchReport build_search_report(const Job& job, const Json& document, const SearchRequest& request,
                                 SearchResult result);

nlohmann::ordered_json search_json(const SearchReport& r);
std::string search_text(const SearchReport& r);
std::string search_csv(const SearchReport& r);

}  // namespace ftb
