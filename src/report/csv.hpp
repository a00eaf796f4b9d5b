// Comma-separated values (RFC 4180): a header row, then one row per record; fields holding a comma, a quote or
// a line break are quoted, quotes doubled.
#pragma once
#include <string>
#include <vector>

namespace ftb {

std::string csv_field(const std::string& value);
std::string csv_line(const std::vector<std::string>& fields);   // with the trailing "\n"

}  // namespace ftb
