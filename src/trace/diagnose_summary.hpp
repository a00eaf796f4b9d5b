// `diagnose` at cluster scale: one small summary file per rank (`diagnose TRACE --summary-out FILE`, run as an
// array job or one rank per trace under the launcher), and the merge of many summaries into the report one pass
// over all traces gives (`diagnose --merge SUMMARY...`). A summary holds the rank's analysis (analyse_rank, every
// kernel name, every matched collective's start) and the few facts of its trace the report reads (world size,
// devices, how much was read), with doubles written to round-trip exactly, so the merged figures are the same.
#pragma once
#include <string>
#include <vector>

#include "trace/trace_analysis.hpp"
#include "trace/trace_tables.hpp"

namespace ftb::trace {

struct RankSummary {
    std::string trace_file;  // the trace it summarises, as given
    TraceTables facts;       // world_size, devices, events_read, json_bytes_read, complete, stop_reason, fraction_read
    RankAnalysis analysis;
};

// The summary document of one rank (JSON text).
std::string summary_json(const std::string& trace_file, const TraceTables& t, const RankAnalysis& r);

// Reads a summary file; throws InputError (file, field, reason) on anything else.
RankSummary read_summary(const std::string& path);

// Summary files as given: a folder stands for the *.json files in it. Sorted by rank (stable), as one pass over
// traces given in rank order would list them.
std::vector<RankSummary> read_summaries(const std::vector<std::string>& paths);

}  // namespace ftb::trace
