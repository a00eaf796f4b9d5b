#include "spec/number_syntax.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ftb {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Index past the run of digits starting at i.
size_t skip_digits(std::string_view s, size_t i) {
    while (i < s.size() && is_digit(s[i])) ++i;
    return i;
}

size_t skip_sign(std::string_view s, size_t i) { return i < s.size() && (s[i] == '-' || s[i] == '+') ? i + 1 : i; }

}  // namespace

bool is_int_syntax(std::string_view s) {
    const size_t start = skip_sign(s, 0);
    const size_t end = skip_digits(s, start);
    return end > start && end == s.size();
}

bool is_float_syntax(std::string_view s) {
    size_t i = skip_sign(s, 0);
    const size_t int_start = i;
    i = skip_digits(s, i);
    const bool int_digits = i > int_start;
    if (i < s.size() && s[i] == '.') {
        const size_t frac_start = ++i;
        i = skip_digits(s, i);
        if (!int_digits && i == frac_start) return false;   // "." alone, or a sign and "."
    } else if (!int_digits) {
        return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        const size_t exp_start = skip_sign(s, i + 1);
        i = skip_digits(s, exp_start);
        if (i == exp_start) return false;
    }
    return i == s.size();
}

std::optional<double> finite_double(std::string_view s) {
    const std::string text(s);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    if (!std::isfinite(v)) return std::nullopt;
    if (errno == ERANGE) return std::nullopt;   // overflow, or underflow (1e-400 would silently read as 0)
    return v;
}

}  // namespace ftb
