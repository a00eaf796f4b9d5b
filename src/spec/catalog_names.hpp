// How a name a user types finds a catalog entry, and what to suggest when none does.
//  - Every section: case, and `-` `_` `.` space as separators, do not matter ("H100 SXM" = h100-sxm).
//  - Models: the HuggingFace organisation may be left out, and variant words that do not change the
//    architecture (Instruct, Chat, it, hf, pt, base) are ignored: meta-llama/Llama-3.1-8B-Instruct has the
//    architecture of meta-llama/Llama-3.1-8B, google/gemma-3-12b-it that of google/gemma-3-12b-pt.
//  - Catalog files may list `aliases:` (short names such as xe9680, H100).
//  - Suggestions rank by family first, then by size: a family that has the asked size suggests that size.
#pragma once
#include <string>
#include <vector>

namespace ftb {

// Lower case, separators folded to '-'.
std::string folded_name(const std::string& name);

// A model id's key: no organisation, lower case, tokens split at separators and letter/digit boundaries
// (numbers keep their decimals: "2.5"), variant words dropped; joined by '-'.
std::string model_key(const std::string& id);

// The family and size a model id names: "Qwen/Qwen2.5-14B-Instruct" -> family "qwen-2.5", size 14e9.
struct ModelNameParts {
    std::string family;     // model key tokens before the size ("" when the id names no size)
    double size = 0;        // parameters the name states (0 = none)
    std::string size_label; // "14b", "8x7b", "125m"
};
ModelNameParts model_name_parts(const std::string& id);

// Up to `max` catalog names to suggest for `asked`, best first (empty when nothing is close).
std::vector<std::string> suggest_models(const std::string& asked, const std::vector<std::string>& catalog, size_t max = 3);

// "(did you mean 'a' or 'b'?)" or "".
std::string did_you_mean_phrase(const std::vector<std::string>& suggestions);

}  // namespace ftb
