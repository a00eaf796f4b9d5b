// The upstream corpus (tests/data/import/corpus/, MANIFEST.csv: each file verbatim with its repo, path and commit):
// every config imports and plans through the real binary, or ends in exactly one `error: FILE: FIELD: REASON`
// line with exit 2; none crashes, no plan holds NaN or inf, and the fields the importers read match the source.
// The import rate per tool may not fall below the figures docs/import.md reports.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "spec/document.hpp"
#include "spec_test_util.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

const std::string kCorpus = std::string(FTBOUND_TEST_DATA) + "/import/corpus/";

struct Entry {
    std::string tool, path, local;
};

std::vector<Entry> manifest() {
    std::ifstream in(kCorpus + "MANIFEST.csv");
    std::vector<Entry> out;
    std::string line;
    std::getline(in, line);   // header: tool,repo,path,commit,local_file,license
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
        if (f.size() == 6) out.push_back({f[0], f[2], f[4]});
    }
    return out;
}

// DeepSpeed JSONs and accelerate configs describe no model: the test pairs them with TrainingArguments.
std::vector<std::string> args_for(const Entry& e, const std::string& verb) {
    const std::string file = kCorpus + e.local, harness = kCorpus + "harness_training_args.json";
    std::vector<std::string> a = {verb};
    if (verb == "plan") a.push_back("--from");
    if (e.tool == "deepspeed") a.insert(a.end(), {harness, "--deepspeed", file});
    else if (e.tool == "accelerate") a.insert(a.end(), {harness, "--accelerate", file});
    else a.push_back(file);
    a.push_back("--json");
    return a;
}

int count_errors(const std::string& err, std::string& first) {
    int n = 0;
    std::stringstream ss(err);
    for (std::string l; std::getline(ss, l);)
        if (l.rfind("error:", 0) == 0) first = n++ ? first : l;
    return n;
}

const nlohmann::json* at(const nlohmann::json& j, const std::string& dotted) {
    const nlohmann::json* n = &j;
    std::stringstream ss(dotted);
    for (std::string p; std::getline(ss, p, '.');) {
        if (!n->is_object() || !n->contains(p)) return nullptr;
        n = &(*n)[p];
    }
    return n->is_null() ? nullptr : n;
}

// A source field against the job key it became (when the source states it as a plain value).
void expect_same(const nlohmann::json& src, const std::string& from, const nlohmann::json& job, const std::string& to,
                 const std::string& file) {
    const nlohmann::json* s = at(src, from);
    if (!s || !(s->is_number() || s->is_string())) return;
    const nlohmann::json* j = at(job, to);
    ASSERT_NE(j, nullptr) << file << ": " << from << " = " << s->dump() << " was not imported to " << to;
    EXPECT_EQ(s->dump(), j->dump()) << file << ": " << from << " -> " << to;
}

void check_fields(const Entry& e, const nlohmann::json& job) {
    const nlohmann::json src = ftb::load_document(kCorpus + e.local);
    if (e.tool == "axolotl") {
        expect_same(src, "base_model", job, "model", e.local);
        expect_same(src, "sequence_len", job, "train.seq_len", e.local);
        expect_same(src, "micro_batch_size", job, "train.micro_batch", e.local);
        const nlohmann::json* adapter = at(src, "adapter");
        const std::string want = adapter && adapter->is_string() ? adapter->get<std::string>() : "full";
        if (want == "lora" || want == "qlora") {
            // A LoRA adapter over a base loaded in 4 or 8 bits is planned as a quantised base (train.qlora.bits).
            auto on = [&](const char* k) { const nlohmann::json* v = at(src, k); return v && v->is_boolean() && v->get<bool>(); };
            const bool q = want == "qlora" || on("load_in_4bit") || on("load_in_8bit");
            EXPECT_EQ(job["train"].value("method", ""), q ? "qlora" : "lora") << e.local;
            expect_same(src, "lora_r", job, "train.lora.rank", e.local);
        } else if (!adapter) {
            EXPECT_EQ(job["train"].value("method", "full"), "full") << e.local;
        }
    } else if (e.tool == "llama_factory") {
        expect_same(src, "model_name_or_path", job, "model", e.local);
        expect_same(src, "cutoff_len", job, "train.seq_len", e.local);
        expect_same(src, "per_device_train_batch_size", job, "train.micro_batch", e.local);
        const nlohmann::json* ft = at(src, "finetuning_type");
        if (ft && *ft == "lora") {
            EXPECT_EQ(job["train"].value("method", ""), at(src, "quantization_bit") ? "qlora" : "lora") << e.local;
            expect_same(src, "lora_rank", job, "train.lora.rank", e.local);
        }
    } else if (e.tool == "torchtune") {
        expect_same(src, "tokenizer.max_seq_len", job, "train.seq_len", e.local);
        expect_same(src, "batch_size", job, "train.micro_batch", e.local);
        expect_same(src, "model.lora_rank", job, "train.lora.rank", e.local);
    } else if (e.tool == "torchtitan") {
        expect_same(src, "training.seq_len", job, "train.seq_len", e.local);
        expect_same(src, "training.local_batch_size", job, "train.micro_batch", e.local);
    }
}

const std::regex kNonFinite(R"([:\[,]\s*-?(nan|inf|NaN|Infinity|-nan)\b)");
const std::regex kErrorLine(R"(^error: [^:]+: [A-Za-z_][A-Za-z0-9_.+ \-]*: .+)");

}  // namespace

TEST(ImportCorpus, EveryUpstreamConfigImportsAndPlansOrSaysWhichField) {
    const std::vector<Entry> entries = manifest();
    ASSERT_GE(entries.size(), 150u);
    std::map<std::string, std::pair<int, int>> rate;   // tool -> planned, all
    for (const Entry& e : entries) {
        const spec_test::CliResult plan = run_ftbound(args_for(e, "plan"));
        ASSERT_EQ(plan.signal, 0) << e.local << " crashed: " << describe(plan);
        ASSERT_TRUE(plan.exit_code == 0 || plan.exit_code == 2) << e.local << ": " << describe(plan);
        ++rate[e.tool].second;
        std::string first;
        if (plan.exit_code == 2) {
            EXPECT_EQ(count_errors(plan.err, first), 1) << e.local << ": " << plan.err;
            EXPECT_TRUE(std::regex_search(first, kErrorLine)) << e.local << ": " << first;
            continue;
        }
        ++rate[e.tool].first;
        EXPECT_FALSE(std::regex_search(plan.out, kNonFinite)) << e.local << ": " << plan.out.substr(0, 400);
        EXPECT_GT(nlohmann::json::parse(plan.out)["step"]["seconds"].get<double>(), 0) << e.local;
        const spec_test::CliResult imp = run_ftbound(args_for(e, "import"));
        ASSERT_EQ(imp.exit_code, 0) << e.local << ": " << describe(imp);
        check_fields(e, nlohmann::json::parse(imp.out));
    }
    // Measured floors (docs/import.md): planned / all per tool.
    const std::map<std::string, double> floor = {{"axolotl", 11 / 71.0},     {"llama_factory", 7 / 45.0},
                                                 {"torchtune", 4 / 50.0},    {"torchtitan", 7 / 21.0},
                                                 {"deepspeed", 33 / 33.0},   {"accelerate", 31 / 33.0}};
    for (const auto& [tool, pr] : rate) {
        std::printf("corpus %-14s %3d / %3d plan\n", tool.c_str(), pr.first, pr.second);
        if (floor.count(tool)) EXPECT_GE(double(pr.first) / pr.second, floor.at(tool) - 1e-9) << tool;
    }
}
