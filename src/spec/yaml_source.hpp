// YAML (and JSON, read as YAML) text to a JSON tree with libyaml's event parser: YAML 1.2 core-schema scalars,
// quoted scalars always strings, duplicate keys, depth and alias expansion refused, only the first document read.
// parse_yaml_text (document.hpp) calls it for every text the build's catalog index does not hold; the index's
// generator calls it for every catalog file.
#pragma once
#include <string>

#include "spec/document.hpp"

namespace ftb {

// Throws InputError(file, field, "<what> is not UTF-8 text (byte 0x.. at offset N) ...") unless `s` is UTF-8
// (RFC 3629): YAML text must be Unicode, and the JSON documents built from it refuse to print anything else.
void require_utf8(const std::string& s, const std::string& file, const std::string& field, const char* what);

// Throws InputError(file, path, reason) on malformed text.
Json parse_yaml_source(const std::string& text, const std::string& file);

}  // namespace ftb
