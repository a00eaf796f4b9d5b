// A family test's tiny config.json, given as YAML text: the model it reads as, or the error it gets.
#pragma once
#include <string>

#include "ftbound/error.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"

namespace hf_config_test {

inline ftb::ModelSpec read(const std::string& yaml) {
    ftb::Json doc = ftb::parse_yaml_text(yaml, "inline");
    return ftb::model_from_hf_config(ftb::Fields(doc, "inline", "model"), "tiny");
}

// The error's text, or "" when the config reads.
inline std::string error_of(const std::string& yaml) {
    try {
        read(yaml);
    } catch (const ftb::InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace hf_config_test
