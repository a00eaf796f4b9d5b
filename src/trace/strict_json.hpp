// A strict, minimal JSON cursor for the common shape of a Kineto event: ASCII strings without escapes, plain
// JSON numbers and the three literals. It reads one pass over the bytes, with no copy and no allocation. It
// never reports an error: on anything outside that shape (an escape, a non-ASCII or control byte, a malformed
// token, a misplaced character) it stops with `unusual`, and on reaching the end of the bytes with `short_input`,
// so the caller can hand the same bytes to the full parser (simdjson), which decodes or refuses them. Everything
// this cursor accepts is valid JSON, so the two can never disagree on what an accepted event holds.
// The bytes after `end` must be readable (the reader keeps SIMDJSON_PADDING bytes there): strings are scanned
// 8 bytes at a time.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ftb::trace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the string scan takes the first byte as the lowest");

class StrictJsonCursor {
public:
    enum class Stop : std::uint8_t { none, unusual, short_input };

    StrictJsonCursor(const char* begin, const char* end) : p_(begin), end_(end) {}

    Stop stop() const { return stop_; }
    const char* position() const { return p_; }

    // Skips whitespace; true when a byte follows.
    bool skip_space() {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
        return p_ < end_ || halt(Stop::short_input);
    }
    // The next byte after whitespace, without consuming it (0 when the input stops there).
    char peek() { return skip_space() ? *p_ : 0; }
    bool consume(char c) {
        if (!skip_space()) return false;
        if (*p_ != c) return halt(Stop::unusual);
        ++p_;
        return true;
    }
    // A string at the cursor (after whitespace): its bytes between the quotes.
    bool string(std::string_view& out) {
        if (!consume('"')) return false;
        const char* q = p_;
        while (true) {
            if (q >= end_) return halt(Stop::short_input);
            std::uint64_t word;
            std::memcpy(&word, q, sizeof word);
            const std::uint64_t special = special_bytes(word);
            if (special == 0) { q += sizeof word; continue; }
            q += __builtin_ctzll(special) / 8;
            if (q >= end_) return halt(Stop::short_input);
            if (*q != '"') return halt(Stop::unusual);  // escape, control or non-ASCII byte
            out = std::string_view(p_, static_cast<std::size_t>(q - p_));
            p_ = q + 1;
            return true;
        }
    }
    // A scalar at the cursor: a string's bytes, or the token of a number or literal. False on an object/array.
    bool scalar(std::string_view& out) {
        const char c = peek();
        if (c == '"') return string(out);
        if (c == '{' || c == '[' || c == 0) return c == 0 ? false : halt(Stop::unusual);
        return token(out);
    }
    // Skips one value of any kind.
    bool skip_value(int depth = 0) {
        const char c = peek();
        std::string_view ignored;
        if ((c == '{' || c == '[') && depth >= kMaxDepth) return halt(Stop::unusual);
        if (c == '{') return skip_container('}', depth + 1);
        if (c == '[') return skip_container(']', depth + 1);
        return c != 0 && scalar(ignored);
    }
    // Iterates the members of an object at the cursor: fn(key) reads (or skips) the value and returns false to stop.
    template <class Fn>
    bool object(Fn&& fn) {
        if (!consume('{')) return false;
        if (peek() == '}') { ++p_; return true; }
        while (true) {
            std::string_view key;
            if (!string(key) || !consume(':') || !fn(key)) return false;
            const char c = peek();
            if (c == ',') { ++p_; continue; }
            if (c == '}') { ++p_; return true; }
            return c != 0 && halt(Stop::unusual);
        }
    }

private:
    static constexpr int kMaxDepth = 64;  // deeper nesting goes to the full parser (no deep recursion here)

    bool halt(Stop s) {
        if (stop_ == Stop::none) stop_ = s;
        return false;
    }
    // Bit 7 of each byte that is '"', '\\', below 0x20 or at/above 0x80 (the classic SWAR zero-byte test).
    static std::uint64_t special_bytes(std::uint64_t w) {
        constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        auto zero_byte = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
        const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
        return zero_byte(w ^ (ones * '"')) | zero_byte(w ^ (ones * '\\')) | below_space | (w & highs);
    }
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    const char* digits(const char* q) {
        while (q < end_ && is_digit(*q)) ++q;
        return q;
    }
    // A JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) or true / false / null.
    bool token(std::string_view& out) {
        const char* q = p_;
        for (std::string_view lit : {std::string_view("true"), std::string_view("false"), std::string_view("null")}) {
            if (*q != lit[0]) continue;
            if (static_cast<std::size_t>(end_ - q) < lit.size() + 1) return halt(Stop::short_input);
            if (std::string_view(q, lit.size()) != lit) return halt(Stop::unusual);
            return end_token(q + lit.size(), out);
        }
        if (q < end_ && *q == '-') ++q;
        if (q >= end_) return halt(Stop::short_input);
        if (*q == '0') ++q;
        else if (is_digit(*q)) q = digits(q);
        else return halt(Stop::unusual);
        if (q < end_ && *q == '.') {
            const char* f = digits(q + 1);
            if (f == q + 1) return halt(f >= end_ ? Stop::short_input : Stop::unusual);
            q = f;
        }
        if (q < end_ && (*q == 'e' || *q == 'E')) {
            ++q;
            if (q < end_ && (*q == '+' || *q == '-')) ++q;
            const char* x = digits(q);
            if (x == q) return halt(x >= end_ ? Stop::short_input : Stop::unusual);
            q = x;
        }
        return end_token(q, out);
    }
    // A token ends at whitespace or a structural byte; the input must go on past it.
    bool end_token(const char* q, std::string_view& out) {
        if (q >= end_) return halt(Stop::short_input);
        const char c = *q;
        if (c != ',' && c != '}' && c != ']' && c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return halt(Stop::unusual);
        out = std::string_view(p_, static_cast<std::size_t>(q - p_));
        p_ = q;
        return true;
    }
    bool skip_container(char close, int depth) {
        ++p_;
        if (peek() == close) { ++p_; return true; }
        while (true) {
            if (close == '}') {
                std::string_view key;
                if (!string(key) || !consume(':')) return false;
            }
            if (!skip_value(depth)) return false;
            const char c = peek();
            if (c == ',') { ++p_; continue; }
            if (c == close) { ++p_; return true; }
            return c != 0 && halt(Stop::unusual);
        }
    }

    const char* p_;
    const char* end_;
    Stop stop_ = Stop::none;
};

}  // namespace ftb::trace
