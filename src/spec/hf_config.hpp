// HuggingFace config.json -> ModelSpec, per family, with each family's own field names.
// Shape fields (width, depth, heads, vocabulary, FFN width) are required; secondary fields take the
// default of the family's transformers config class (named in hf_config.cpp).
#pragma once
#include <string>

#include "ftbound/model_spec.hpp"
#include "spec/document.hpp"

namespace ftb {

// `fields` is the config mapping; `name` labels the model in reports.
ModelSpec model_from_hf_config(const Fields& fields, const std::string& name);

// The families the contract lists.
const std::vector<std::string>& supported_model_types();

}  // namespace ftb
