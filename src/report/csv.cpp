#include "report/csv.hpp"

#include "ftbound/error.hpp"

namespace ftb {
namespace {

void collect(const nlohmann::ordered_json& j, const std::string& path, std::vector<std::pair<std::string, std::string>>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) collect(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    } else if (!j.is_array()) {
        out.emplace_back(path, csv_value(j));
    }
}

std::string line(const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) s += (i ? "," : "") + csv_cell(cells[i]);
    return s + "\r\n";
}

}  // namespace

CsvTable::CsvTable(std::vector<std::string> header) : header_(std::move(header)) {}

void CsvTable::add(std::vector<std::string> row) {
    if (row.size() != header_.size()) throw InternalError("CSV row of " + std::to_string(row.size()) + " cells under " +
                                                          std::to_string(header_.size()) + " columns");
    rows_.push_back(std::move(row));
}

std::string CsvTable::str() const {
    std::string s = line(header_);
    for (const auto& r : rows_) s += line(r);
    return s;
}

std::string csv_cell(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string q = "\"";
    for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string csv_value(const nlohmann::ordered_json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::vector<std::pair<std::string, std::string>> csv_columns(const nlohmann::ordered_json& doc) {
    std::vector<std::pair<std::string, std::string>> out;
    collect(doc, "", out);
    return out;
}

}  // namespace ftb
