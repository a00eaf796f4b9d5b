#include "spec/catalog_index.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>

#include "ftbound/error.hpp"

namespace ftb {

// The generated table (build/generated/catalog_index_data.cpp).
extern const PrebuiltDocument kPrebuiltDocuments[];
extern const size_t kPrebuiltDocumentCount;

namespace {

// Reads back the CBOR that Json::to_cbor wrote for a parsed file (make_catalog_index): maps, lists, text, integers,
// floats, booleans and null. nlohmann's from_cbor copies a string a byte at a time and took most of a plan's
// catalog reading (~0.13M instructions a file). Integers come back signed (int64_t), as parse_yaml_source makes
// them; CBOR itself keeps a non-negative one unsigned.
class CborReader {
public:
    CborReader(const char* data, size_t bytes) : at_(data), end_(data + bytes) {}

    Json value() {
        const uint8_t head = next();
        const uint8_t major = head >> 5, info = head & 0x1f;
        if (major == 7) return simple(info);
        const uint64_t n = argument(info);
        switch (major) {
            case 0: return static_cast<int64_t>(n);
            case 1: return -1 - static_cast<int64_t>(n);
            case 3: return text(n);
            case 4: return list(n);
            case 5: return mapping(n);
            default: throw InternalError("catalog index: CBOR major type " + std::to_string(major));
        }
    }

private:
    const char* at_;
    const char* end_;

    const char* take(uint64_t bytes) {
        if (bytes > static_cast<uint64_t>(end_ - at_)) throw InternalError("catalog index: CBOR ends early");
        const char* start = at_;
        at_ += bytes;
        return start;
    }
    uint8_t next() { return static_cast<uint8_t>(*take(1)); }

    uint64_t big_endian(int bytes) {
        uint64_t v = 0;
        for (const char* p = take(bytes); bytes-- > 0; ++p) v = (v << 8) | static_cast<uint8_t>(*p);
        return v;
    }

    // The count or value a head carries: in the head below 24, else in the next 1, 2, 4 or 8 bytes.
    uint64_t argument(uint8_t info) {
        if (info < 24) return info;
        if (info <= 27) return big_endian(1 << (info - 24));
        throw InternalError("catalog index: CBOR argument " + std::to_string(info));
    }

    std::string text(uint64_t bytes) { return std::string(take(bytes), bytes); }

    Json list(uint64_t n) {
        Json out = Json::array();
        for (uint64_t i = 0; i < n; ++i) out.push_back(value());
        return out;
    }

    Json mapping(uint64_t n) {
        Json out = Json::object();
        for (uint64_t i = 0; i < n; ++i) {
            const uint8_t head = next();
            if (head >> 5 != 3) throw InternalError("catalog index: a CBOR map key is not text");
            std::string key = text(argument(head & 0x1f));
            out[key] = value();
        }
        return out;
    }

    // false, true, null, and half (to_cbor's NaN and infinities), single and double floats.
    Json simple(uint8_t info) {
        switch (info) {
            case 20: return false;
            case 21: return true;
            case 22: return nullptr;
            case 25: return half(static_cast<uint16_t>(big_endian(2)));
            case 26: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(big_endian(4))));
            case 27: return std::bit_cast<double>(big_endian(8));
            default: throw InternalError("catalog index: CBOR simple value " + std::to_string(info));
        }
    }

    // IEEE 754 half precision (RFC 8949 appendix D).
    static double half(uint16_t h) {
        const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
        const double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                                 : exponent != 31 ? std::ldexp(mantissa + 1024, exponent - 25)
                                 : mantissa == 0  ? std::numeric_limits<double>::infinity()
                                                  : std::numeric_limits<double>::quiet_NaN();
        return (h & 0x8000) ? -magnitude : magnitude;
    }
};

}  // namespace

size_t prebuilt_document_count() { return kPrebuiltDocumentCount; }

std::optional<Json> prebuilt_document(std::string_view text) {
    const uint64_t fingerprint = text_fingerprint(text);
    const PrebuiltDocument* end = kPrebuiltDocuments + kPrebuiltDocumentCount;
    const PrebuiltDocument* it = std::lower_bound(kPrebuiltDocuments, end, std::make_tuple(text.size(), fingerprint),
                                                  [](const PrebuiltDocument& d, const std::tuple<size_t, uint64_t>& key) {
                                                      return std::make_tuple(d.text_bytes, d.fingerprint) < key;
                                                  });
    for (; it != end && it->text_bytes == text.size() && it->fingerprint == fingerprint; ++it) {
        if (std::memcmp(it->text, text.data(), text.size()) != 0) continue;
        return CborReader(it->cbor, it->cbor_bytes).value();
    }
    return std::nullopt;
}

}  // namespace ftb
