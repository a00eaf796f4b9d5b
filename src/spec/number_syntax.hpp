// The syntax of numbers in input files, checked by a scanner rather than std::regex: libstdc++'s regex
// matcher recurses once per character, so a 40,000-digit scalar overflowed the stack (exit 139, issue #30).
// Each check is one pass over the text, whatever its length.
#pragma once
#include <optional>
#include <string_view>

namespace ftb {

// YAML 1.2 core schema: [-+]?[0-9]+
bool is_int_syntax(std::string_view s);
// YAML 1.2 core schema: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float_syntax(std::string_view s);
// The value of text that has is_int_syntax or is_float_syntax; nullopt when it is beyond a double's range,
// above or below (strtod's ERANGE: 1e400, 1e-400).
std::optional<double> finite_double(std::string_view s);

}  // namespace ftb
