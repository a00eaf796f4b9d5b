#include "spec/catalog_names.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include "spec/document.hpp"

namespace ftb {
namespace {

bool is_separator(char c) { return c == '-' || c == '_' || c == '.' || c == ' ' || c == '/'; }

// Words in a HuggingFace id that name a training variant of the same architecture.
bool is_variant_word(const std::string& t) {
    return t == "instruct" || t == "chat" || t == "it" || t == "hf" || t == "pt" || t == "base";
}

// Lower-case tokens: runs of letters, and numbers with their decimals ("2.5").
std::vector<std::string> tokens_of(const std::string& s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (std::isalpha(c)) {
            std::string t;
            while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) t += char(std::tolower(s[i++]));
            out.push_back(t);
        } else if (std::isdigit(c)) {
            std::string t;
            while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) ||
                                    (s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))))
                t += s[i++];
            out.push_back(t);
        } else {
            ++i;
        }
    }
    return out;
}

// Words that mark a re-packaged copy of a model's weights, in the same shapes: axolotl-ai-co/gpt-oss-120b-dequantized
// (the MXFP4 experts stored in bf16), axolotl-quants/Llama-4-Maverick-17B-128E-Linearized-bnb-nf4-bf16 (experts split
// into one nn.Linear each, stored NF4). The marker and the storage words after it are not part of the model's name.
bool is_copy_marker(const std::string& t) { return t == "dequantized" || t == "linearized"; }

std::string join(const std::vector<std::string>& t, size_t from, size_t to) {
    std::string s;
    for (size_t i = from; i < to && i < t.size(); ++i) s += (s.empty() ? "" : "-") + t[i];
    return s;
}

std::vector<std::string> model_tokens(const std::string& id) {
    const auto slash = id.rfind('/');
    std::vector<std::string> t = tokens_of(slash == std::string::npos ? id : id.substr(slash + 1));
    const auto marker = std::find_if(t.begin(), t.end(), is_copy_marker);
    if (marker != t.begin()) t.erase(marker, t.end());
    t.erase(std::remove_if(t.begin(), t.end(), is_variant_word), t.end());
    return t;
}

bool is_number(const std::string& t) { return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])); }

// 0 when the families are the same or one is the other with words in front ("llama-3" in "meta-llama-3"). Beyond
// `limit` it returns a lower bound above it without measuring: the edit distance is at least the length difference,
// so a long name against short ones costs nothing (spec_reader_fuzz: a 6,000-character model name took seconds).
size_t family_distance(const std::string& a, const std::string& b, size_t limit) {
    if (a == b) return 0;
    auto ends_with = [](const std::string& s, const std::string& tail) {
        return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0 &&
               s[s.size() - tail.size() - 1] == '-';
    };
    if (!a.empty() && !b.empty() && (ends_with(a, b) || ends_with(b, a))) return 0;
    const size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
    if (gap > limit) return gap;
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

}  // namespace

std::string folded_name(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (is_separator(c)) {
            if (!out.empty() && out.back() != '-') out += '-';
        } else {
            out += char(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out;
}

std::string model_key(const std::string& id) {
    const auto t = model_tokens(id);
    return join(t, 0, t.size());
}

ModelNameParts model_name_parts(const std::string& id) {
    const auto t = model_tokens(id);
    ModelNameParts p;
    for (size_t i = 0; i + 1 < t.size(); ++i) {
        // A size is a number (no longer than any real one: stod must not overflow) followed by b or m.
        if (!is_number(t[i]) || t[i].size() > 12 || (t[i + 1] != "b" && t[i + 1] != "m")) continue;
        const double unit = t[i + 1] == "b" ? 1e9 : 1e6;
        size_t family_end = i;
        double n = std::stod(t[i]) * unit;
        p.size_label = t[i] + t[i + 1];
        // "8x7b": experts x expert size.
        if (i >= 2 && t[i - 1] == "x" && is_number(t[i - 2]) && t[i - 2].size() <= 12) {
            n *= std::stod(t[i - 2]);
            p.size_label = t[i - 2] + "x" + p.size_label;
            family_end = i - 2;
        }
        p.size = n;
        p.family = join(t, 0, family_end);
        return p;
    }
    p.family = join(t, 0, t.size());
    return p;
}

std::vector<std::string> suggest_models(const std::string& asked, const std::vector<std::string>& catalog, size_t max) {
    const ModelNameParts a = model_name_parts(asked);
    if (a.size <= 0 || a.family.empty()) {
        // No size in the name: the closest id, with or without its organisation.
        std::vector<std::string> keys;
        for (const auto& c : catalog) keys.push_back(model_key(c));
        const std::string k = did_you_mean(model_key(asked), keys);
        if (!k.empty()) return {catalog[size_t(std::find(keys.begin(), keys.end(), k) - keys.begin())]};
        const std::string whole = did_you_mean(asked, catalog);
        return whole.empty() ? std::vector<std::string>{} : std::vector<std::string>{whole};
    }
    const size_t limit = std::max<size_t>(1, a.family.size() / 3);
    std::vector<std::tuple<size_t, double, std::string>> ranked;   // family distance, size distance, name
    for (const auto& c : catalog) {
        const ModelNameParts p = model_name_parts(c);
        const size_t fd = family_distance(a.family, p.family, limit);
        if (fd > limit || p.size <= 0) continue;
        ranked.emplace_back(fd, std::fabs(std::log(p.size / a.size)), c);
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<std::string> out;
    for (const auto& [fd, sd, name] : ranked) {
        const auto& [fd0, sd0, name0] = ranked.front();
        // The family has the asked size: suggest only that size.
        if (sd0 == 0 && (fd != fd0 || sd != 0)) break;
        // Otherwise the nearest sizes of the closest family.
        if (fd != fd0) break;
        out.push_back(name);
        if (out.size() == max) break;
    }
    if (out.empty()) {
        const std::string whole = did_you_mean(asked, catalog);
        if (!whole.empty()) out.push_back(whole);
    }
    return out;
}

std::string did_you_mean_phrase(const std::vector<std::string>& suggestions) {
    if (suggestions.empty()) return "";
    std::string s = " (did you mean ";
    for (size_t i = 0; i < suggestions.size(); ++i)
        s += (i == 0 ? "" : i + 1 == suggestions.size() ? " or " : ", ") + ("'" + suggestions[i] + "'");
    return s + "?)";
}

}  // namespace ftb
