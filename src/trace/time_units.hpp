// Chrome-trace times are microseconds written as JSON numbers, integer (legacy absolute clocks, ~1.7e15)
// or fractional (relative clocks with nanosecond digits). Parsing them through a double loses the last
// digits of absolute clocks, so the decimal text is turned into integer nanoseconds directly.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace ftb::trace {

// "1682725898236567" -> 1682725898236567000; "4458676522690.655" -> 4458676522690655;
// rounds half away from zero past the third fractional digit. Exponent forms are accepted.
// Returns nullopt for text that is not a JSON number or whose value does not fit in int64 nanoseconds.
std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text);

// An integer JSON number (e.g. a correlation id or a byte count); nullopt when not an integer.
std::optional<std::int64_t> integer_text(std::string_view text);

}  // namespace ftb::trace
