// data/frameworks/NAME.yaml -> FrameworkProfile. A profile may name a `base` profile and give only what
// differs; the frameworks are the files in that folder, so adding one is a data file (plus a test).
#pragma once
#include <string>

#include "ftbound/framework.hpp"

namespace ftb {

// `file`/`field` name where the framework was asked for, for the error message of an unknown name.
FrameworkProfile load_framework(const std::string& name, const std::string& file, const std::string& field);

}  // namespace ftb
