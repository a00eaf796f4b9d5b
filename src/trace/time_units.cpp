#include "trace/time_units.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ftb::trace {

namespace {
constexpr std::int64_t kMaxNs = INT64_MAX / 2;  // headroom so that start + duration never overflows

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<std::int64_t> via_double(std::string_view text) {
    std::string s(text);
    char* end = nullptr;
    double us = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(us)) return std::nullopt;
    double ns = std::round(us * 1000.0);
    if (!(std::fabs(ns) < static_cast<double>(kMaxNs))) return std::nullopt;
    return static_cast<std::int64_t>(ns);
}
}  // namespace

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) {
    std::size_t i = 0;
    const std::size_t n = text.size();
    bool negative = false;
    if (i < n && text[i] == '-') {
        negative = true;
        ++i;
    }
    if (i >= n || !is_digit(text[i])) return std::nullopt;
    std::int64_t whole_us = 0;
    while (i < n && is_digit(text[i])) {
        if (whole_us > (kMaxNs / 1000 - 9) / 10) return via_double(text);  // too big: let the range check fail
        whole_us = whole_us * 10 + (text[i] - '0');
        ++i;
    }
    std::int64_t frac_ns = 0;
    int round_up = 0;
    if (i < n && text[i] == '.') {
        ++i;
        if (i >= n || !is_digit(text[i])) return std::nullopt;
        int k = 0;
        while (i < n && is_digit(text[i])) {
            if (k < 3) frac_ns = frac_ns * 10 + (text[i] - '0');
            else if (k == 3) round_up = text[i] >= '5' ? 1 : 0;
            ++k;
            ++i;
        }
        for (; k < 3; ++k) frac_ns *= 10;
    }
    if (i < n && (text[i] == 'e' || text[i] == 'E')) return via_double(text);
    if (i != n) return std::nullopt;
    std::int64_t ns = whole_us * 1000 + frac_ns + round_up;
    if (ns > kMaxNs) return std::nullopt;
    return negative ? -ns : ns;
}

std::optional<std::int64_t> integer_text(std::string_view text) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
    return v;
}

}  // namespace ftb::trace
