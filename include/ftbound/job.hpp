// A resolved job: everything a plan needs, as plain structs (no file formats below this line).
#pragma once
#include "ftbound/framework.hpp"
#include "ftbound/job_spec.hpp"
#include "ftbound/model_spec.hpp"
#include "ftbound/system_spec.hpp"

namespace ftb {

struct Job {
    JobSpec spec;
    ModelSpec model;
    SystemSpec system;
    FrameworkProfile framework;
};

}  // namespace ftb
