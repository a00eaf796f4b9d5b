// The calibrated settings of ftbound (every value marked CALIBRATED that moves a prediction), each registered as
// one fit for leave_out.hpp, and the planner that applies a calibration to a case's job. The memory band's
// fractions (kBandFractions) move no prediction, only the band around it: leave_out.hpp refits them with
// band_fit.hpp.
#pragma once
#include <string>
#include <vector>

#include "validate/leave_out.hpp"

namespace ftb {

// The registered settings, in the order they are fitted:
// - matmul_time_factor (data/frameworks/{llm-foundry,torchtune,hf,litgpt,torchtitan}.yaml time.matmul_time_factor): one
//   factor per GPU architecture, fitted on the time cases (tokens/s, step or iteration seconds, MFU; quality high
//   or medium) whose framework profile declares a factor for the case's architecture; neutral 1.
// - host_overhead_per_block_us (data/frameworks/litgpt.yaml): fitted on the single-GPU LoRA time cases of profiles
//   that declare it; neutral 0.
// - host_overhead_per_fsdp_unit_us (data/frameworks/litgpt.yaml): fitted on the FSDP (ZeRO-3, more than one
//   data-parallel rank) time cases of profiles that declare it; neutral 0.
std::vector<CalibratedSetting> calibrated_settings();

// A case's job with every setting at `cal` (a setting or key absent from it: neutral).
Job calibrated_job(const Job& job, const std::vector<CalibratedSetting>& settings, const Calibration& cal);

// Reads the cases of every cases file (job paths relative to each file's folder), with their jobs loaded and their
// leave-out sources; a job that cannot be read leaves the case unpredicted with the error.
std::vector<LoadedCase> load_cases(const std::vector<std::string>& cases_files);

// Plans one loaded case with `settings` at `cal` (validation.hpp run_case on the calibrated job).
CasePredictor case_predictor(const std::vector<CalibratedSetting>& settings);

}  // namespace ftb
