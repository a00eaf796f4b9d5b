// Where a plan is outside what validation/ measured: one sentence each, printed beside the figures (plan and
// compare) so that a reader weighs them. The validated ranges are those of validation/cases.csv,
// validation/qwen/cases.csv and validation/measured/ (tests/unit/ops_accuracy_notes_test.cpp checks the list
// of GPU architectures against the validation jobs).
#pragma once
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "system/device_arch.hpp"

namespace ftb {

// GPU architectures with measured cases in validation/.
const std::vector<GpuArch>& validated_gpu_architectures();

// A range the notes quote: over the cases of `csv` (under the source tree) whose id starts with `id_prefix` and
// contains `id_contains`, for `quantity`, the smallest and largest error (predicted - measured) / measured and the
// mean absolute error, in whole percent, as `ftbound validate` prints them. tests/unit/ops_accuracy_notes_test.cpp
// recomputes every range from validation/ and fails when one drifts, so the printed figures stay true.
struct QuotedRange {
    std::string csv, id_prefix, id_contains, quantity;
    int low_pct = 0, high_pct = 0, mape_pct = 0;
    int cases = 0;
};

// The ranges the notes quote, by name: qlora_step_bnb, qlora_memory_bnb, ... (see accuracy_notes.cpp).
const std::vector<std::pair<std::string, QuotedRange>>& quoted_ranges();

std::vector<std::string> accuracy_notes(const Job& job);

}  // namespace ftb
