// Printers for a diagnosis: the JSON document of `diagnose --json` (keys fixed by CONTRACT.md, plus extras)
// and the text form. Also the measured breakdown in the plan's {phase, seconds, resource} form, so that a
// predicted step can be set beside it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace/trace_analysis.hpp"
#include "trace/trace_tables.hpp"

namespace ftb::trace {

struct BreakdownItem {
    std::string phase;
    double seconds = 0;
    std::string resource;
};

struct MeasuredStep {
    double step_seconds = 0;  // mean ProfilerStep time, or the window when the trace marks no steps
    bool from_steps = false;
    std::vector<BreakdownItem> breakdown;  // sums to step_seconds
};

MeasuredStep measured_step(const Diagnosis& d, const std::vector<const TraceTables*>& tables);

struct InputSummary {
    std::string file;
    const TraceTables* tables = nullptr;
};

nlohmann::json diagnosis_json(const Diagnosis& d, const std::vector<InputSummary>& inputs, const MeasuredStep& measured);

std::string diagnosis_text(const Diagnosis& d, const std::vector<InputSummary>& inputs, const MeasuredStep& measured);

}  // namespace ftb::trace
