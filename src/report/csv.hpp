// Comma-separated values for --csv (RFC 4180: cells holding a comma, quote or line break are quoted, quotes
// doubled; lines end with CRLF as the RFC says). Reused by every command that prints a table of figures.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ftb {

class CsvTable {
public:
    explicit CsvTable(std::vector<std::string> header);
    void add(std::vector<std::string> row);   // as many cells as the header
    std::string str() const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

std::string csv_cell(const std::string& text);

// A JSON value as one cell: numbers at full precision, null empty, booleans true/false, strings as they are.
std::string csv_value(const nlohmann::ordered_json& v);

// The scalar values of a JSON document as (dotted key, cell) columns, in document order; lists are left out.
std::vector<std::pair<std::string, std::string>> csv_columns(const nlohmann::ordered_json& doc);

}  // namespace ftb
