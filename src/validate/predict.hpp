// The predicted value of one validation quantity for a job, in the case's unit.
#pragma once
#include <optional>
#include <string>

#include "ftbound/job.hpp"

namespace ftb {

// nullopt (with `why`) when the quantity is not predicted for this job.
std::optional<double> predict_quantity(const Job& job, const std::string& quantity, const std::string& unit,
                                       std::string& why);

}  // namespace ftb
