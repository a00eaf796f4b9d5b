// Reading YAML/JSON input files into a JSON tree, and typed, path-aware access to their fields.
// Every accessor reports problems as InputError(file, dotted.path, reason); unknown keys get a
// "did you mean" suggestion so typos never pass silently.
#pragma once
#include <nlohmann/json.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace ftb {

using Json = nlohmann::json;

// Parses YAML (JSON is accepted as YAML) from text. `file` is used in messages.
Json parse_yaml_text(const std::string& text, const std::string& file);
// Reads and parses a file (YAML or JSON by content). Refuses files over 16 MiB.
Json load_document(const std::string& path);
std::string read_text_file(const std::string& path, const std::string& what);

// Applies `a.b.c=value` to the tree; value is parsed as a YAML scalar or flow collection.
void apply_override(Json& root, const std::string& assignment, const std::string& file);

// Closest candidate by edit distance, or "" when none is close.
std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates);

// A view of one mapping in a document, with its dotted path, for typed field access.
class Fields {
public:
    Fields(const Json& node, std::string file, std::string path);

    bool has(const std::string& key) const;
    const Json* raw(const std::string& key) const;
    Fields child(const std::string& key) const;   // a mapping field (must be a mapping)
    std::string path_of(const std::string& key) const;
    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }
    const Json& node() const { return node_; }

    // Throws when a key is not in `allowed` (with a suggestion).
    void reject_unknown(const std::vector<std::string>& allowed) const;

    std::optional<int64_t> get_int(const std::string& key, int64_t min, int64_t max) const;
    std::optional<double> get_number(const std::string& key, double min, double max) const;
    std::optional<bool> get_bool(const std::string& key) const;
    std::optional<std::string> get_string(const std::string& key) const;
    // A size in bytes: a number of bytes, or a string with a GiB/GB/MiB/MB/TiB/TB/KiB/KB suffix.
    std::optional<double> get_size_bytes(const std::string& key) const;
    // One of `choices` (case-sensitive); the error lists the choices.
    std::optional<std::string> get_choice(const std::string& key, const std::vector<std::string>& choices) const;
    std::vector<std::string> get_string_list(const std::string& key) const;

    [[noreturn]] void fail(const std::string& key, const std::string& reason) const;

private:
    const Json& node_;
    std::string file_;
    std::string path_;
};

// Parses "80GiB", "80 GB", "1.5e9" into bytes; nullopt when malformed.
std::optional<double> parse_size_bytes(const std::string& text);

}  // namespace ftb
