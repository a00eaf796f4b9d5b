#include "spec/yaml_source.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdio>
#include <string_view>

#include "ftbound/error.hpp"
#include "spec/number_syntax.hpp"

namespace ftb {
namespace {

constexpr int kMaxDepth = 64;
// YAML aliases can expand a small file into an enormous tree ("billion laughs"); no real job or config
// comes near this many nodes.
constexpr size_t kMaxNodes = 1u << 20;

// YAML 1.2 core-schema resolution of a plain (unquoted) scalar. A number beyond a double's range stays text;
// the typed accessors (Fields::get_int, get_number) report it as out of range.
Json resolve_plain_scalar(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (is_int_syntax(s)) {
        try {
            return Json(static_cast<int64_t>(std::stoll(s)));
        } catch (const std::out_of_range&) {
            if (auto v = finite_double(s)) return Json(*v);   // beyond int64: a (whole) double
            return s;
        }
    }
    if (is_float_syntax(s))
        if (auto v = finite_double(s)) return *v;
    return s;
}

// Where `s` stops being UTF-8 (RFC 3629 section 3: no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF),
// or npos. YAML text must be Unicode (YAML 1.2 section 5.2) but yaml-cpp passes stray bytes through, and the JSON
// documents built from it refuse to print them (nlohmann::json dump: type_error 316): a reader must stop them here.
size_t invalid_utf8_at(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        const auto lead = static_cast<unsigned char>(s[i]);
        if (lead < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint32_t cp = 0, least = 0;
        if ((lead & 0xE0) == 0xC0) len = 2, cp = lead & 0x1F, least = 0x80;
        else if ((lead & 0xF0) == 0xE0) len = 3, cp = lead & 0x0F, least = 0x800;
        else if ((lead & 0xF8) == 0xF0) len = 4, cp = lead & 0x07, least = 0x10000;
        else return i;
        if (len > s.size() - i) return i;
        for (size_t k = 1; k < len; ++k) {
            const auto next = static_cast<unsigned char>(s[i + k]);
            if ((next & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (next & 0x3F);
        }
        if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return std::string_view::npos;
}

Json to_json(const YAML::Node& n, const std::string& file, int depth, const std::string& path, size_t& nodes) {
    if (depth > kMaxDepth) throw InputError(file, path, "nesting deeper than 64 levels");
    if (++nodes > kMaxNodes)
        throw InputError(file, path, "more than " + std::to_string(kMaxNodes) + " values (YAML aliases expanding without bound?)");
    switch (n.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
            require_utf8(n.Scalar(), file, path, "the value");
            if (n.Tag() == "!") return n.Scalar();  // quoted: always a string
            return resolve_plain_scalar(n.Scalar());
        case YAML::NodeType::Sequence: {
            Json arr = Json::array();
            size_t i = 0;
            for (const auto& e : n) arr.push_back(to_json(e, file, depth + 1, path + "[" + std::to_string(i++) + "]", nodes));
            return arr;
        }
        case YAML::NodeType::Map: {
            Json obj = Json::object();
            for (const auto& kv : n) {
                if (!kv.first.IsScalar()) throw InputError(file, path, "a mapping key is not a plain name");
                const std::string key = kv.first.Scalar();
                require_utf8(key, file, path, "a key");
                const std::string child = path.empty() ? key : path + "." + key;
                if (obj.contains(key)) throw InputError(file, child, "key appears twice");
                obj[key] = to_json(kv.second, file, depth + 1, child, nodes);
            }
            return obj;
        }
    }
    return nullptr;
}

}  // namespace

void require_utf8(const std::string& s, const std::string& file, const std::string& field, const char* what) {
    const size_t at = invalid_utf8_at(s);
    if (at == std::string_view::npos) return;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[at])));
    throw InputError(file, field, std::string(what) + " is not UTF-8 text (byte " + byte + " at offset " +
                                      std::to_string(at) + "): save the file as UTF-8");
}

Json parse_yaml_source(const std::string& text, const std::string& file) {
    if (text.find('\0') != std::string::npos) throw InputError(file, "", "not a text file (contains NUL bytes)");
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(file, "", "malformed YAML/JSON at line " + std::to_string(e.mark.line + 1) + ", column " +
                                       std::to_string(e.mark.column + 1) + ": " + e.msg);
    } catch (const std::exception& e) {
        throw InputError(file, "", std::string("malformed YAML/JSON: ") + e.what());
    }
    try {
        size_t nodes = 0;
        return to_json(root, file, 0, "", nodes);
    } catch (const YAML::Exception& e) {
        throw InputError(file, "", std::string("malformed YAML/JSON: ") + e.msg);
    }
}

}  // namespace ftb
