#include "spec/yaml_source.hpp"

#include <yaml-cpp/yaml.h>

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

Json to_json(const YAML::Node& n, const std::string& file, int depth, const std::string& path, size_t& nodes) {
    if (depth > kMaxDepth) throw InputError(file, path, "nesting deeper than 64 levels");
    if (++nodes > kMaxNodes)
        throw InputError(file, path, "more than " + std::to_string(kMaxNodes) + " values (YAML aliases expanding without bound?)");
    switch (n.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return nullptr;
        case YAML::NodeType::Scalar:
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
