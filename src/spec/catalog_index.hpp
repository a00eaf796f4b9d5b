// The catalog's files parsed at build time. yaml-cpp took a quarter of `ftbound plan`'s CPU time reading the ~15
// catalog files a plan names (docs/performance.md); the build parses every data/**/*.yaml and every model's
// config.json (data/models/**/*.json, read with the same reader) once (src/spec/index/make_catalog_index.cpp), and
// keeps each file's text with its tree in CBOR. parse_yaml_text is a
// function of the text alone, so a text byte-for-byte equal to a catalog file's gets that file's tree, from any
// path (the source tree, an installed copy, $FTBOUND_DATA); any other text, an edited catalog file included, is
// parsed as before.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "spec/document.hpp"

namespace ftb {

// The files the build indexes: the catalog's YAML files and models' config.json files.
inline bool indexed_catalog_file(const std::filesystem::path& p) {
    return p.extension() == ".yaml" || p.extension() == ".json";
}

// The tree parse_yaml_source gives `text` when `text` equals a catalog file of this build; nullopt otherwise.
std::optional<Json> prebuilt_document(std::string_view text);

// FNV-1a, 64-bit: the index's key (with the length; the whole text is then compared).
inline uint64_t text_fingerprint(std::string_view text) {
    uint64_t h = 14695981039346656037ull;   // FNV offset basis
    for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;   // FNV prime
    return h;
}

// One indexed file, as the generated table (catalog_index_data.cpp, sorted by bytes then fingerprint) holds it.
struct PrebuiltDocument {
    size_t text_bytes;
    uint64_t fingerprint;
    const char* text;
    const char* cbor;
    size_t cbor_bytes;
};

// How many catalog files the build indexed.
size_t prebuilt_document_count();

}  // namespace ftb
