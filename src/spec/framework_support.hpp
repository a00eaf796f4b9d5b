// Reads a framework profile's `supports:` section (data/frameworks/NAME.yaml) into FrameworkSupport.
#pragma once
#include <string>

#include "ftbound/framework_support.hpp"
#include "spec/document.hpp"

namespace ftb {

// The profile named `framework` in the catalog; a profile without `supports:` supports everything.
FrameworkSupport load_framework_support(const std::string& framework);
// The section itself (`f` is the `supports` mapping), for tests and other catalogs.
FrameworkSupport read_framework_support(const Fields& f);

}  // namespace ftb
