#include "spec/yaml_source.hpp"

#include <yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/number_syntax.hpp"

namespace ftb {
namespace {

constexpr int kMaxDepth = 64;
// YAML aliases can expand a small file into an enormous tree ("billion laughs"); no real job or config
// comes near this many nodes, or this much text: four times the largest file read (16 MiB). Without the second
// bound an 8 KB file whose aliases repeat one 8,000-character string 900,000 times took 8 GB and 50 s.
constexpr size_t kMaxNodes = 1u << 20;
constexpr size_t kMaxTextBytes = size_t(64) << 20;

bool null_text(const std::string& s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

// YAML 1.2 core-schema resolution of a plain (unquoted) scalar. A number beyond a double's range stays text;
// the typed accessors (Fields::get_int, get_number) report it as out of range.
Json resolve_plain_scalar(const std::string& s) {
    if (null_text(s)) return nullptr;
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
// or npos. libyaml's reader refuses such bytes in a file; text that does not go through it (a --set key) is checked
// here, since the JSON documents built from it refuse to print them (nlohmann::json dump: type_error 316).
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

// A node as the builder needs it: its JSON value, and for keys and aliases what YAML made of it.
struct Node {
    Json value;
    bool key = false;   // a scalar that is not null: usable as a mapping key
    bool merge = false; // the merge key `<<` (plain, untagged)
    std::string text;   // a scalar's text as written (a key keeps it verbatim: `1.0: x` is the key "1.0")
    size_t count = 0;   // values in its expanded tree (kMaxNodes)
    size_t bytes = 0;   // keys' and scalars' text in its expanded tree (kMaxTextBytes)
    int height = 0;     // levels below it (kMaxDepth)
};

// libyaml's event parser over one text. A failed parse throws "malformed YAML/JSON at line L, column C: ...", or,
// for bytes that are not UTF-8 (libyaml's reader checks the whole text, comments included), says so.
class EventStream {
public:
    EventStream(const std::string& text, const std::string& file) : text_(text), file_(file) {
        yaml_parser_initialize(&parser_);
        yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    }
    ~EventStream() {
        if (has_event_) yaml_event_delete(&event_);
        yaml_parser_delete(&parser_);
    }
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    // The next event; valid until the next call.
    const yaml_event_t& next() {
        if (has_event_) yaml_event_delete(&event_);
        has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
        if (!has_event_) fail();
        return event_;
    }

private:
    [[noreturn]] void fail() const {
        const std::string problem = parser_.problem ? parser_.problem : "unreadable text";
        if (parser_.error == YAML_READER_ERROR) throw InputError(file_, "", byte_problem(problem));
        const yaml_mark_t& at = parser_.problem_mark;
        throw InputError(file_, "", "malformed YAML/JSON at line " + std::to_string(at.line + 1) + ", column " +
                                        std::to_string(at.column + 1) + ": " +
                                        (parser_.context ? std::string(parser_.context) + ": " : "") + problem);
    }

    // libyaml's reader stops at a byte that is not UTF-8 or at a character YAML does not allow (C0 and C1 controls
    // other than tab and line breaks, YAML 1.2 section 5.1); it gives the byte offset, the line is counted here.
    std::string byte_problem(const std::string& problem) const {
        const size_t offset = std::min(parser_.problem_offset, text_.size());
        const size_t line_start = text_.rfind('\n', offset == 0 ? 0 : offset - 1);
        const size_t line = 1 + size_t(std::count(text_.begin(), text_.begin() + std::ptrdiff_t(offset), '\n'));
        const size_t column = offset - (line_start == std::string_view::npos || offset == 0 ? 0 : line_start + 1) + 1;
        char value[24] = "";
        if (parser_.problem_value >= 0) std::snprintf(value, sizeof value, "0x%02X ", unsigned(parser_.problem_value));
        const std::string where = "at line " + std::to_string(line) + ", column " + std::to_string(column);
        if (problem.rfind("control characters", 0) == 0)
            return std::string("a control character ") + value + where +
                   ": YAML text takes tabs, line breaks and printable characters only";
        return "not UTF-8 text (" + problem + " " + value + where + "): save the file as UTF-8";
    }

    std::string_view text_;
    const std::string& file_;
    yaml_parser_t parser_{};
    yaml_event_t event_{};
    bool has_event_ = false;
};

// The JSON tree of a text's first document. Scalars: a plain one without a tag that reads as null is null (and can
// be no key); a quoted or block one, or one tagged "!", is a string; any other resolves as plain (YAML 1.2 core
// schema). Aliases expand to copies of their anchor's tree, counted and measured before they are copied, so a
// fan-out of aliases is refused without being built.
class TreeBuilder {
public:
    TreeBuilder(EventStream& events, const std::string& file) : events_(events), file_(file) {}

    Json document() {
        events_.next();   // the stream's start
        if (events_.next().type == YAML_STREAM_END_EVENT) return nullptr;   // no document: an empty file
        const yaml_event_t& first = events_.next();                          // past the document's start
        if (first.type == YAML_DOCUMENT_END_EVENT) return nullptr;
        return node(first, 0, "").value;   // any later document is not read
    }

private:
    Node node(const yaml_event_t& e, int depth, const std::string& path) {
        if (depth > kMaxDepth) throw InputError(file_, path, "nesting deeper than 64 levels");
        switch (e.type) {
            case YAML_ALIAS_EVENT: return alias(reinterpret_cast<const char*>(e.data.alias.anchor), depth, path);
            case YAML_SCALAR_EVENT: return named(text_of(e.data.scalar.anchor), scalar(e, path));
            case YAML_SEQUENCE_START_EVENT: {
                open_anchors_.push_back(text_of(e.data.sequence_start.anchor));
                Node n = sequence(depth, path);
                return named(pop_open_anchor(), std::move(n));
            }
            case YAML_MAPPING_START_EVENT: {
                open_anchors_.push_back(text_of(e.data.mapping_start.anchor));
                Node n = mapping(depth, path);
                return named(pop_open_anchor(), std::move(n));
            }
            default: throw InputError(file_, path, "malformed YAML/JSON: a node was expected");
        }
    }

    Node scalar(const yaml_event_t& e, const std::string& path) {
        Node n;
        n.text.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        n.count = counted(1, n.text.size(), path);
        n.bytes = n.text.size();
        const char* tag = reinterpret_cast<const char*>(e.data.scalar.tag);
        const bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (!tag && plain && null_text(n.text)) return n;
        n.key = true;
        n.merge = !tag && plain && n.text == "<<";
        const bool string = tag ? std::string_view(tag) == "!" : !plain;
        n.value = string ? Json(n.text) : resolve_plain_scalar(n.text);
        return n;
    }

    Node sequence(int depth, const std::string& path) {
        Node n;
        n.value = Json::array();
        n.count = counted(1, 0, path);
        for (size_t i = 0;; ++i) {
            const yaml_event_t& e = events_.next();
            if (e.type == YAML_SEQUENCE_END_EVENT) return n;
            add_child(n, node(e, depth + 1, path + "[" + std::to_string(i) + "]"), nullptr);
        }
    }

    Node mapping(int depth, const std::string& path) {
        Node n;
        n.value = Json::object();
        n.count = counted(1, 0, path);
        std::vector<Node> merged;
        for (;;) {
            const yaml_event_t& k = events_.next();
            if (k.type == YAML_MAPPING_END_EVENT) break;
            const Node key = node(k, depth + 1, path);
            if (!key.key) throw InputError(file_, path, "a mapping key is not a plain name");
            nodes_ -= key.count;   // keys are not values, but their text is copied with the tree
            n.bytes += key.bytes;
            const std::string child = path.empty() ? key.text : path + "." + key.text;
            if (key.merge) {
                merged.push_back(node(events_.next(), depth + 1, child));
                continue;
            }
            if (n.value.contains(key.text)) throw InputError(file_, child, "key appears twice");
            add_child(n, node(events_.next(), depth + 1, child), &key.text);
        }
        for (const Node& source : merged) merge_into(n, source, path.empty() ? "<<" : path + ".<<");
        return n;
    }

    // The merge key (`<<: *defaults`, YAML 1.1's merge type, which PyYAML and so the frameworks' config readers apply):
    // the mapping takes each key of the merged mapping(s) it does not set itself; of a list of mappings, the first
    // that sets a key gives it.
    void merge_into(Node& n, const Node& source, const std::string& path) const {
        const auto take = [&](const Json& from) {
            if (!from.is_object()) throw InputError(file_, path, "the merge key `<<` takes a mapping or a list of mappings");
            for (const auto& [k, v] : from.items())
                if (!n.value.contains(k)) n.value[k] = v;
        };
        if (source.value.is_array()) {
            for (const Json& m : source.value) take(m);
        } else {
            take(source.value);
        }
        n.count += source.count;
        n.bytes += source.bytes;
        n.height = std::max(n.height, source.height);
    }

    static void add_child(Node& parent, Node child, const std::string* key) {
        parent.count += child.count;
        parent.bytes += child.bytes;
        parent.height = std::max(parent.height, child.height + 1);
        if (key) parent.value[*key] = std::move(child.value);
        else parent.value.push_back(std::move(child.value));
    }

    Node alias(const char* name, int depth, const std::string& path) {
        const auto it = anchors_.find(name);
        if (it == anchors_.end()) {
            // Anchors are recorded when their node is complete: one still open contains this alias.
            const bool open = std::find(open_anchors_.begin(), open_anchors_.end(), name) != open_anchors_.end();
            throw InputError(file_, path, std::string("malformed YAML/JSON: alias *") + name +
                                              (open ? " is inside the node its anchor names, which would contain "
                                                      "itself without end"
                                                    : ": its anchor is not defined before it"));
        }
        if (depth + it->second.height > kMaxDepth) throw InputError(file_, path, "nesting deeper than 64 levels");
        counted(it->second.count, it->second.bytes, path);
        return it->second;
    }

    static std::string text_of(const unsigned char* s) { return s ? reinterpret_cast<const char*>(s) : ""; }

    // A complete node: its anchor (if any) now names it.
    Node named(const std::string& anchor, Node n) {
        if (!anchor.empty()) anchors_[anchor] = n;
        return n;
    }
    std::string pop_open_anchor() {
        std::string anchor = std::move(open_anchors_.back());
        open_anchors_.pop_back();
        return anchor;
    }

    // Adds a node's values and text to the document's totals; returns the values added.
    size_t counted(size_t values, size_t text_bytes, const std::string& path) {
        nodes_ += values;
        text_bytes_ += text_bytes;
        if (nodes_ > kMaxNodes)
            throw InputError(file_, path, "more than " + std::to_string(kMaxNodes) +
                                              " values (YAML aliases expanding without bound?)");
        if (text_bytes_ > kMaxTextBytes)
            throw InputError(file_, path, "more than " + std::to_string(kMaxTextBytes >> 20) +
                                              " MiB of text once aliases are expanded (YAML aliases expanding "
                                              "without bound?)");
        return values;
    }

    EventStream& events_;
    const std::string& file_;
    std::map<std::string, Node, std::less<>> anchors_;
    std::vector<std::string> open_anchors_;   // of the collections being read, outermost first ("" without one)
    size_t nodes_ = 0, text_bytes_ = 0;
};

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
    EventStream events(text, file);
    return TreeBuilder(events, file).document();
}

}  // namespace ftb
