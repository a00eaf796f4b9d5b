// The page assets (src/web/assets/: stylesheet, scripts, the default job of the served page), compiled into the
// binary at build time (cmake/embed_web_assets.cmake) so a report opens offline and `serve` needs no files.
#pragma once
#include <string_view>

namespace ftb::web {

// The asset with this file name; empty when there is none.
std::string_view asset(std::string_view name);

}  // namespace ftb::web
