// The job file (CONTRACT.md) -> a resolved Job: JobSpec + ModelSpec + SystemSpec + FrameworkProfile.
// All checks a user can fail happen here, each as InputError(file, dotted.field, reason).
#pragma once
#include <string>
#include <vector>

#include "ftbound/job.hpp"
#include "spec/document.hpp"
#include "spec/framework_profile.hpp"

namespace ftb {

// Reads `path`, applies `--set` overrides, resolves catalog names, checks everything.
Job load_job(const std::string& path, const std::vector<std::string>& overrides = {});
// A job file's text parsed into its document (a mapping), `file` naming it in messages.
Json job_document(const std::string& text, const std::string& file);
// The same from an already parsed document (overrides applied), `file` naming it in messages.
Job job_from_document(const Json& doc, const std::string& file);
// The same, where `overrides` (--set KEY=VALUE, already applied) were given: an error in a field one of them set
// names that --set, not the file.
Job job_from_document(const Json& doc, const std::string& file, const std::vector<std::string>& overrides);

// Whether the model has a SiLU-gated FFN, the only one whose input Megatron-Core's fused SwiGLU stores in fp8
// (train.activation_func_fp8_input_store).
bool has_swiglu_ffn(const ModelSpec& m);

// Re-checks a JobSpec after a programmatic change (limits search, recommendations); throws InputError.
void check_job(const Job& job);

}  // namespace ftb
