#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ftb {

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_(std::move(right_aligned)) {
    right_.resize(header_.size(), false);
}

void TextTable::add(std::vector<std::string> row) {
    row.resize(header_.size());
    rows_.push_back(std::move(row));
}

void TextTable::add_rule() { rows_.emplace_back(); }

std::string TextTable::str(const std::string& indent) const {
    std::vector<size_t> width(header_.size(), 0);
    for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
    for (const auto& r : rows_)
        for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    auto line = [&](const std::vector<std::string>& r) {
        std::string s = indent;
        for (size_t c = 0; c < header_.size(); ++c) {
            const std::string& cell = c < r.size() ? r[c] : std::string();
            const size_t pad = width[c] - cell.size();
            if (right_[c]) s += std::string(pad, ' ') + cell;
            else s += cell + std::string(pad, ' ');
            if (c + 1 < header_.size()) s += "  ";
        }
        return s + "\n";   // every line padded to the full width: the table stays one aligned block
    };
    size_t total = indent.size();
    for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c + 1 < width.size() ? 2 : 0);
    std::string out = line(header_);
    out += indent + std::string(total - indent.size(), '-') + "\n";
    for (const auto& r : rows_) out += r.empty() ? indent + std::string(total - indent.size(), '-') + "\n" : line(r);
    return out;
}

std::string fmt_bytes(double b) {
    const double a = std::fabs(b);
    if (a >= 1099511627776.0) return fmt::format("{:.2f} TiB", b / 1099511627776.0);
    if (a >= 1073741824.0) return fmt::format("{:.2f} GiB", b / 1073741824.0);
    if (a >= 1048576.0) return fmt::format("{:.1f} MiB", b / 1048576.0);
    if (a >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
    return fmt::format("{:.0f} B", b);
}

std::string fmt_seconds(double s) {
    if (!std::isfinite(s)) return "n/a";
    if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
    if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
    if (s < 120) return fmt::format("{:.2f} s", s);
    if (s < 7200) return fmt::format("{:.1f} min", s / 60);
    if (s < 3 * 86400) return fmt::format("{:.1f} h", s / 3600);
    return fmt::format("{:.1f} days", s / 86400);
}

std::string fmt_count(double n) {
    const double a = std::fabs(n);
    if (a >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
    if (a >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
    if (a >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
    if (a >= 1e4) return fmt::format("{:.1f}K", n / 1e3);
    return fmt::format("{:.0f}", n);
}

std::string fmt_percent(double f, int decimals) { return fmt::format("{:.{}f}%", f * 100, decimals); }

}  // namespace ftb
