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

std::vector<std::string> accuracy_notes(const Job& job);

}  // namespace ftb
