// The predicted value of one validation quantity for a job, in the case's unit.
#pragma once
#include <optional>
#include <string>

#include "ftbound/job.hpp"
#include "memory/device_memory.hpp"

namespace ftb {

// The plan's uncertainty band around a predicted memory figure, in the case's unit.
struct PredictedBand {
    double low = 0, high = 0;
    BandParts parts;   // the figure's bytes by kind, which the band weighs (ftbound validate --fit-band)
};

// nullopt (with `why`) when the quantity is not predicted for this job. For the memory figures (allocated_peak,
// typical_step_allocated_peak, reserved_peak, device_used) `band`, when given, receives the band the plan puts
// around the figure. typical_step_allocated_peak is the allocated peak of typical_step_job (ftbound/memory.hpp).
std::optional<double> predict_quantity(const Job& job, const std::string& quantity, const std::string& unit,
                                       std::string& why, std::optional<PredictedBand>* band = nullptr);

}  // namespace ftb
