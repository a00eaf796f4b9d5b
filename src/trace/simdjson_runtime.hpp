// simdjson's parser kernels, loaded on first use (simdjson_runtime.cpp says why).
#pragma once
#include <simdjson.h>

#include <string>

namespace ftb {

// Loads libsimdjson on the first call; InputError naming the library when it cannot be loaded. Every reader calls it
// before its first parse: simdjson's parser set-up is noexcept and cannot report a missing library itself.
void require_simdjson();

// simdjson::error_message's text, read from the loaded library's table (the header's inline function refers to it
// by link-time symbol).
std::string simdjson_error_text(simdjson::error_code error);

}  // namespace ftb
