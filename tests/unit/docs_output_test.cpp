// docs/output.md lists every key the JSON outputs print (plan, model, validate, compare, search), so a new output key
// is documented in the commit that adds it; byte counts are integers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "spec_test_util.hpp"
#include "test_paths.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

// Dotted key paths of every leaf; list elements as `[]`.
void key_paths(const nlohmann::json& j, const std::string& path, std::set<std::string>& out) {
    if (j.is_object() && !j.empty()) {
        for (const auto& [k, v] : j.items()) key_paths(v, path.empty() ? k : path + "." + k, out);
    } else if (j.is_array() && !j.empty() && (j[0].is_object() || j[0].is_array())) {
        for (const auto& e : j) key_paths(e, path + "[]", out);
    } else {
        out.insert(path);
    }
}

// Documented when the doc names the key, or a key above it whose row covers what is under it.
bool documented(const std::string& doc, const std::string& path) {
    if (doc.find("`" + path + "`") != std::string::npos || doc.find("`" + path + "[]`") != std::string::npos) return true;
    for (size_t i = path.size(); i-- > 0;)
        if ((path[i] == '.' || path[i] == '[') && doc.find("`" + path.substr(0, i) + (path[i] == '[' ? "[]" : "") + "`") != std::string::npos)
            return true;
    return false;
}

void expect_documented(const nlohmann::json& j, const std::string& what) {
    const std::string doc = spec_test::slurp(std::string(ftb_test::source_dir()) + "/docs/output.md");
    std::set<std::string> paths;
    key_paths(j, "", paths);
    for (const auto& p : paths) EXPECT_TRUE(documented(doc, p)) << what << " prints `" << p << "`, docs/output.md does not list it";
}

nlohmann::json json_of(const std::vector<std::string>& args) {
    spec_test::CliResult r = run_ftbound(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

const std::string kJob = std::string(ftb_test::source_dir()) + "/examples/llama3.1-8b-lora-r760xa.yaml";

TEST(DocsOutput, PlanKeysAreDocumented) {
    expect_documented(json_of({"plan", kJob, "--json"}), "plan --json");
    // A job that does not fit prints fits_with[]; a MoE model prints its expert keys.
    expect_documented(json_of({"plan", std::string(ftb_test::source_dir()) + "/examples/llama3.1-70b-full-8xh100-unsharded.yaml", "--json"}),
                      "plan --json (does not fit)");
}

TEST(DocsOutput, ModelCompareValidateKeysAreDocumented) {
    expect_documented(json_of({"model", "mistralai/Mixtral-8x7B-v0.1", "--json"}), "model --json");
    expect_documented(json_of({"compare", kJob, "--hardware", "r760xa,dgx-h100", "--json"}), "compare --json");
    const std::string dir = spec_test::scratch_dir() + "/validate_keys";
    spec_test::write_scratch("validate_keys/job.yaml", spec_test::slurp(kJob));
    spec_test::write_scratch("validate_keys/cases.csv",
                             "id,job,quantity,measured,unit,source,note\n"
                             "c1,job.yaml,tokens_per_second_per_gpu,5000,tokens/s,test,\n");
    expect_documented(json_of({"validate", dir + "/cases.csv", "--json"}), "validate --json");
    expect_documented(json_of({"validate", "--leave-out", dir + "/cases.csv", "--json"}), "validate --leave-out --json");
}

TEST(DocsOutput, SearchKeysAreDocumented) {
    expect_documented(json_of({"search", kJob, "--json", "--top", "2"}), "search --json");
    // Nothing feasible: bound_by with its nearest configuration.
    expect_documented(json_of({"search", kJob, "--json", "--deadline", "0.001"}), "search --json (deadline)");
}

// Byte counts and parameter counts are whole numbers in JSON (no 1.5e10, no .0).
void expect_integers(const nlohmann::json& j, const std::string& path) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            const std::string p = path.empty() ? k : path + "." + k;
            const bool bytes = k.size() > 6 && k.compare(k.size() - 6, 6, "_bytes") == 0;
            if (bytes && v.is_number()) {
                EXPECT_TRUE(v.is_number_integer()) << p << " = " << v.dump();
            }
            if (bytes && v.is_array()) {
                for (const auto& e : v) {
                    EXPECT_TRUE(e.is_number_integer()) << p << "[] = " << e.dump();
                }
            }
            expect_integers(v, p);
        }
    } else if (j.is_array()) {
        for (const auto& e : j) expect_integers(e, path + "[]");
    }
}

TEST(DocsOutput, ByteCountsAreIntegers) {
    const nlohmann::json plan = json_of({"plan", kJob, "--json"});
    expect_integers(plan, "");
    for (const auto& [k, v] : plan["memory"]["breakdown"].items()) EXPECT_TRUE(v.is_number_integer()) << "memory.breakdown." << k;
    for (const auto& [k, v] : plan["memory"]["params"].items()) EXPECT_TRUE(v.is_number_integer()) << "memory.params." << k;
}

}  // namespace
