// Validation job files state what their source states, nothing more (validation/job_keys_by_source.yaml): every key
// of every validation job file, and of every cases file's `set` column, must be listed for its source with the
// source's line that states it; a framework's default belongs in data/frameworks/<name>.yaml instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spec/document.hpp"
#include "validate/validation.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

namespace fs = std::filesystem;

const std::string kValidation = std::string(ftb_test::source_dir()) + "/validation";
const std::vector<std::string> kCaseFiles = {"cases.csv", "qwen/cases.csv", "pretrain/cases.csv",
                                             "measured/cpu-vm/cases.csv"};

struct SourceKeys {
    std::string stated_by;
    std::map<std::string, std::string> keys;   // key (or `top.*`) -> the line that states it
};

// Source (case-id prefix) -> its allowed keys, from the allowlist document.
std::map<std::string, SourceKeys> read_allowlist(const Json& doc) {
    std::map<std::string, SourceKeys> out;
    for (const Json& entry : doc.at("sources")) {
        SourceKeys k;
        k.stated_by = entry.at("stated_by").get<std::string>();
        if (entry.contains("transcribed"))
            for (const Json& key : entry.at("transcribed")) k.keys[key.get<std::string>()] = k.stated_by;
        if (entry.contains("stated"))
            for (auto it = entry.at("stated").begin(); it != entry.at("stated").end(); ++it)
                k.keys[it.key()] = it.value().get<std::string>();
        for (const Json& s : entry.at("source")) out[s.get<std::string>()] = k;
    }
    return out;
}

// Dotted paths of a document's leaves (a list is a leaf).
void flatten(const Json& node, const std::string& prefix, std::vector<std::string>& out) {
    for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.value().is_object()) flatten(it.value(), path, out);
        else out.push_back(path);
    }
}

// The allowlist entry that covers `key` ("" when none): the key itself, or `top.*` for its top-level section.
std::string covering_entry(const SourceKeys& allowed, const std::string& key) {
    if (allowed.keys.count(key)) return key;
    const std::string wildcard = key.substr(0, key.find('.')) + ".*";
    return allowed.keys.count(wildcard) ? wildcard : "";
}

struct KeyUse {
    std::string source, key, where;
};

// Every key of every validation job file and `set` column, with its source.
std::vector<KeyUse> validation_keys() {
    std::vector<KeyUse> uses;
    for (const std::string dir : {"jobs", "qwen/jobs", "pretrain/jobs", "measured/cpu-vm/jobs"})
        for (const auto& e : fs::directory_iterator(kValidation + "/" + dir)) {
            if (e.path().extension() != ".yaml") continue;
            std::vector<std::string> keys;
            flatten(load_document(e.path().string()), "", keys);
            const std::string name = e.path().filename().string();
            for (const auto& k : keys) uses.push_back({case_source(name), k, dir + "/" + name});
        }
    for (const auto& csv : kCaseFiles)
        for (const auto& c : read_cases(kValidation + "/" + csv))
            for (const auto& kv : c.set) uses.push_back({case_source(c.id), kv.substr(0, kv.find('=')), csv + " " + c.id});
    return uses;
}

std::vector<std::string> unlisted_keys(const std::map<std::string, SourceKeys>& allow, const std::vector<KeyUse>& uses) {
    std::set<std::string> bad;
    for (const auto& u : uses) {
        const auto it = allow.find(u.source);
        if (it == allow.end()) bad.insert(u.where + ": source '" + u.source + "' has no entry");
        else if (covering_entry(it->second, u.key).empty()) bad.insert(u.where + ": " + u.key);
    }
    return {bad.begin(), bad.end()};
}

TEST(ValidationJobKeys, EveryKeyIsOneItsSourceStates) {
    const auto allow = read_allowlist(load_document(kValidation + "/job_keys_by_source.yaml"));
    const auto uses = validation_keys();
    ASSERT_GT(uses.size(), 10000u) << "the validation job files were not found under " << kValidation;
    const auto bad = unlisted_keys(allow, uses);
    std::string list;
    for (const auto& b : bad) list += "  " + b + "\n";
    EXPECT_TRUE(bad.empty()) << bad.size() << " key(s) no line of their source states (validation/job_keys_by_source.yaml; "
                             << "a framework default belongs in data/frameworks/<name>.yaml):\n" << list;
}

TEST(ValidationJobKeys, EveryEntryNamesItsLineAndIsUsed) {
    const auto allow = read_allowlist(load_document(kValidation + "/job_keys_by_source.yaml"));
    std::set<std::pair<std::string, std::string>> used;
    for (const auto& u : validation_keys()) {
        const auto it = allow.find(u.source);
        if (it != allow.end()) used.insert({u.source, covering_entry(it->second, u.key)});
    }
    for (const auto& [source, keys] : allow) {
        EXPECT_FALSE(keys.stated_by.empty()) << source;
        for (const auto& [key, line] : keys.keys) {
            EXPECT_GT(line.size(), 20u) << source << " " << key << ": name the source's line that states it";
            EXPECT_TRUE(used.count({source, key})) << source << " " << key << ": no job file of the source carries it";
        }
    }
}

TEST(ValidationJobKeys, AKeyWithoutAStatedLineIsFound) {
    const Json doc = parse_yaml_text(
        "sources:\n  - source: [lf]\n    stated_by: \"a README row naming micro-batch and the model\"\n"
        "    transcribed: [model.*, train.micro_batch]\n",
        "allowlist.yaml");
    const auto allow = read_allowlist(doc);
    const std::vector<KeyUse> uses = {{"lf", "model.d_model", "a.yaml"},
                                      {"lf", "train.micro_batch", "a.yaml"},
                                      {"lf", "train.reduce_dtype", "a.yaml"},
                                      {"tune", "train.seq_len", "b.yaml"}};
    EXPECT_EQ(unlisted_keys(allow, uses),
              (std::vector<std::string>{"a.yaml: train.reduce_dtype", "b.yaml: source 'tune' has no entry"}));
}

}  // namespace
}  // namespace ftb
