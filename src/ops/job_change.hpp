// A candidate change to a job (fit advice, recommendations): applied to a copy and re-checked, so that a
// change the layout rules forbid is dropped instead of planned.
#pragma once
#include <functional>
#include <optional>

#include "ftbound/error.hpp"
#include "ftbound/job.hpp"
#include "spec/job_file.hpp"

namespace ftb {

// The changed job, or nothing when `apply` says the change does not apply or the result breaks a rule.
inline std::optional<Job> changed_job(const Job& base, const std::function<bool(Job&)>& apply) {
    Job trial = base;
    if (!apply(trial)) return std::nullopt;
    try {
        check_job(trial);
    } catch (const InputError&) {
        return std::nullopt;
    }
    return trial;
}

}  // namespace ftb
