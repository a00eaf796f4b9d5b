#include "spec/document.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "ftbound/error.hpp"
#include "spec/catalog_index.hpp"
#include "spec/number_syntax.hpp"
#include "spec/yaml_source.hpp"

namespace ftb {
namespace {

constexpr size_t kMaxInputBytes = 16u << 20;

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string type_name(const Json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return "a boolean";
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_array()) return "a list";
    return "a mapping";
}

std::string show(const Json& v) {
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return "'" + s + "'";
}

}  // namespace

Json parse_yaml_text(const std::string& text, const std::string& file) {
    if (std::optional<Json> prebuilt = prebuilt_document(text)) return std::move(*prebuilt);
    return parse_yaml_source(text, file);
}

std::string read_text_file(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a folder, not a " + what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open " + what + " (missing or unreadable)");
    in.seekg(0, std::ios::end);
    auto size = in.tellg();
    if (size < 0) throw InputError(path, "", "cannot read " + what);
    if (static_cast<size_t>(size) > kMaxInputBytes) throw InputError(path, "", what + " is larger than 16 MiB");
    in.seekg(0);
    std::string text(static_cast<size_t>(size), '\0');
    in.read(text.data(), size);
    if (!in) throw InputError(path, "", "cannot read " + what);
    return text;
}

Json load_document(const std::string& path) { return parse_yaml_text(read_text_file(path, "file"), path); }

void apply_override(Json& root, const std::string& assignment, const std::string& file) {
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--set", assignment, "expected KEY=VALUE with a dotted key, e.g. train.micro_batch=8");
    std::string key = assignment.substr(0, eq);
    require_utf8(key, "--set", "", "the key");
    Json value = parse_yaml_text(assignment.substr(eq + 1), "--set " + key);
    if (!root.is_object()) throw InputError(file, "", "the job file is not a mapping");
    Json* node = &root;
    std::stringstream ss(key);
    std::string part, path;
    std::vector<std::string> parts;
    while (std::getline(ss, part, '.')) {
        if (part.empty()) throw InputError("--set", key, "empty component in the dotted key");
        parts.push_back(part);
    }
    if (key.back() == '.') throw InputError("--set", key, "empty component in the dotted key");
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        Json& next = (*node)[parts[i]];
        if (next.is_null()) next = Json::object();
        if (!next.is_object())
            throw InputError("--set", key, "'" + parts[i] + "' is " + type_name(next) + ", not a mapping");
        node = &next;
    }
    (*node)[parts.back()] = value;
}

std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::max<size_t>(2, key.size() / 3) + 1;
    for (const auto& c : candidates) {
        // The distance is at least the length difference: a candidate that cannot beat the best is not measured, so
        // a long name against short ones costs nothing (spec_reader_fuzz: a 6,000-character model name took seconds).
        const size_t gap = key.size() > c.size() ? key.size() - c.size() : c.size() - key.size();
        if (gap >= best_d) continue;
        size_t d = edit_distance(key, c);
        if (d < best_d) best_d = d, best = c;
    }
    return best;
}

// "80GiB", " 1.5e9 ", "512 MiB": an unsigned number ([0-9]*\.?[0-9]+, an optional exponent), optional spaces
// and an optional unit, checked by scanning (see number_syntax.hpp for why not std::regex).
std::optional<double> parse_size_bytes(const std::string& text) {
    static const std::pair<const char*, double> kUnits[] = {
        {"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0},
        {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}};
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
    std::string_view s(text);
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    double mult = 1;
    for (const auto& [unit, m] : kUnits) {
        const std::string_view u(unit);
        if (s.size() >= u.size() && s.substr(s.size() - u.size()) == u) {
            s.remove_suffix(u.size());
            mult = m;
            break;
        }
    }
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    if (s.empty() || s.front() == '+' || s.front() == '-' || !is_float_syntax(s)) return std::nullopt;
    const size_t dot = s.find('.');
    if (dot != std::string_view::npos && (dot + 1 == s.size() || s[dot + 1] < '0' || s[dot + 1] > '9'))
        return std::nullopt;   // "1." and "1.e3": the unit grammar wants a digit after the point
    const auto v = finite_double(s);
    if (!v) return std::nullopt;
    const double bytes = *v * mult;
    if (!std::isfinite(bytes)) return std::nullopt;
    return bytes;
}

Fields::Fields(const Json& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
    if (!node_.is_object())
        throw InputError(file_, path_.empty() ? "" : path_,
                         (path_.empty() ? std::string("the document") : std::string("this field")) +
                             " must be a mapping, found " + type_name(node_));
}

std::string Fields::path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Fields::has(const std::string& key) const { return node_.contains(key) && !node_.at(key).is_null(); }

const Json* Fields::raw(const std::string& key) const { return has(key) ? &node_.at(key) : nullptr; }

Fields Fields::child(const std::string& key) const {
    if (!node_.contains(key)) fail(key, "missing");
    return Fields(node_.at(key), file_, path_of(key));
}

void Fields::fail(const std::string& key, const std::string& reason) const {
    throw InputError(file_, path_of(key), reason);
}

void Fields::reject_unknown(const std::vector<std::string>& allowed) const {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
        if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
        std::string hint = did_you_mean(it.key(), allowed);
        fail(it.key(), "unknown key" + (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)"));
    }
}

namespace {

// A plain scalar with number syntax that no double holds (resolve_plain_scalar kept it as text).
bool is_unrepresentable_number(const Json& v) {
    if (!v.is_string()) return false;
    const std::string& s = v.get_ref<const std::string&>();
    return (is_int_syntax(s) || is_float_syntax(s)) && !finite_double(s);
}

std::string range_text(double min, double max) {
    std::ostringstream os;
    os << "(allowed " << min << " to " << max << ")";
    return os.str();
}

}  // namespace

std::optional<int64_t> Fields::get_int(const std::string& key, int64_t min, int64_t max) const {
    const Json* v = raw(key);
    if (!v) return std::nullopt;
    const std::string allowed = "(allowed " + std::to_string(min) + " to " + std::to_string(max) + ")";
    if (is_unrepresentable_number(*v))
        fail(key, "out of range: a " + std::to_string(v->get_ref<const std::string&>().size()) +
                      "-character number beyond any machine number " + allowed);
    int64_t out;
    if (v->is_number_integer()) {
        out = v->get<int64_t>();
    } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
               std::fabs(v->get<double>()) < 9e15) {
        out = static_cast<int64_t>(v->get<double>());
    } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
        std::ostringstream os;   // a whole number past int64 (2^63, 1e300): say so, not "not a whole number"
        os << "out of range: " << v->get<double>() << " " << allowed;
        fail(key, os.str());
    } else {
        fail(key, "expected a whole number, found " + type_name(*v) + " " + show(*v));
    }
    if (out < min || out > max) fail(key, "out of range: " + std::to_string(out) + " " + allowed);
    return out;
}

std::optional<double> Fields::get_number(const std::string& key, double min, double max) const {
    const Json* v = raw(key);
    if (!v) return std::nullopt;
    if (is_unrepresentable_number(*v))
        fail(key, "out of range: a " + std::to_string(v->get_ref<const std::string&>().size()) +
                      "-character number beyond any machine number " + range_text(min, max));
    if (!v->is_number()) fail(key, "expected a number, found " + type_name(*v) + " " + show(*v));
    double out = v->get<double>();
    if (!std::isfinite(out) || out < min || out > max) {
        std::ostringstream os;
        os << "out of range: " << out << " " << range_text(min, max);
        fail(key, os.str());
    }
    return out;
}

std::optional<bool> Fields::get_bool(const std::string& key) const {
    const Json* v = raw(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(key, "expected true or false, found " + type_name(*v) + " " + show(*v));
    return v->get<bool>();
}

std::optional<std::string> Fields::get_string(const std::string& key) const {
    const Json* v = raw(key);
    if (!v) return std::nullopt;
    if (v->is_string()) return v->get<std::string>();
    if (v->is_number()) return v->dump();
    fail(key, "expected a string, found " + type_name(*v));
}

std::optional<double> Fields::get_size_bytes(const std::string& key) const {
    const Json* v = raw(key);
    if (!v) return std::nullopt;
    std::optional<double> bytes;
    if (v->is_number()) bytes = v->get<double>();
    else if (v->is_string()) bytes = parse_size_bytes(v->get<std::string>());
    if (!bytes || *bytes < 0 || !std::isfinite(*bytes))
        fail(key, "expected a size such as 80GiB, 96GB or a number of bytes, found " + show(*v));
    return bytes;
}

std::optional<std::string> Fields::get_choice(const std::string& key, const std::vector<std::string>& choices) const {
    auto s = get_string(key);
    if (!s) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : " | ") + c;
    std::string hint = did_you_mean(*s, choices);
    fail(key, "'" + *s + "' is not one of " + list + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
}

std::vector<std::string> Fields::get_string_list(const std::string& key) const {
    const Json* v = raw(key);
    if (!v) return {};
    if (v->is_string()) return {v->get<std::string>()};
    if (!v->is_array()) fail(key, "expected a list of names, found " + type_name(*v));
    std::vector<std::string> out;
    for (const auto& e : *v) {
        if (!e.is_string()) fail(key, "expected a list of names; an entry is " + type_name(e));
        out.push_back(e.get<std::string>());
    }
    return out;
}

}  // namespace ftb
