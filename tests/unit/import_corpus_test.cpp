// The upstream corpus (tests/data/import/corpus/, MANIFEST.csv: each file verbatim with its repo, path and commit):
// every config imports and plans through the real binary, or ends in exactly one `error: FILE: FIELD: REASON`
// line with exit 2; none crashes, no plan holds NaN or inf, and the fields the importers read match the source.
// The import rate per tool may not fall below the figures docs/import.md reports.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "spec/document.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

const std::string kCorpus = std::string(ftb_test::test_data()) + "/import/corpus/";

// MANIFEST.csv: tool,repo,path,commit,local_file,license,job,expect,args.
//   job: what the file describes: `finetune` (a training job: SFT, pre-training, LoRA/QLoRA, DPO, KTO, reward
//        model, QAT, distillation; DeepSpeed and accelerate files are the parallel settings of one), or what it is
//        instead (inference, merge, export, generation, evaluation, ppo, tokens).
//   expect: `plan`, or `error: FIELD: TEXT`: the one error line names FIELD and says TEXT.
//   args: what the test adds, space separated, corpus paths relative to corpus/ (the DeepSpeed JSON a config
//        names by a path inside its own repository, as the error line asks for it: --deepspeed FILE).
struct Entry {
    std::string tool, path, local, job, expect;
    std::vector<std::string> args;
};

std::vector<Entry> manifest() {
    std::ifstream in(kCorpus + "MANIFEST.csv");
    std::vector<Entry> out;
    std::string line;
    std::getline(in, line);   // header
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
        if (f.size() == 8) f.push_back("");
        EXPECT_EQ(f.size(), 9u) << "MANIFEST.csv: " << line;
        if (f.size() != 9) continue;
        Entry e{f[0], f[2], f[4], f[6], f[7], {}};
        std::stringstream as(f[8]);
        for (std::string a; as >> a;) e.args.push_back(a.rfind("--", 0) == 0 ? a : kCorpus + a);
        out.push_back(e);
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
    a.insert(a.end(), e.args.begin(), e.args.end());
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
    std::string want = s->dump();
    // PyYAML (YAML 1.1) reads 500_000 as 500000.
    if (s->is_string() && std::regex_match(s->get<std::string>(), std::regex("[0-9][0-9_]*")))
        want = std::regex_replace(s->get<std::string>(), std::regex("_"), "");
    EXPECT_EQ(want, j->dump()) << file << ": " << from << " -> " << to;
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
        // null (no truncation): the corpus recipes all train on the Alpaca builders, planned at their documented 512.
        if (!at(src, "tokenizer.max_seq_len")) EXPECT_EQ(job["train"].value("seq_len", 0), 512) << e.local;
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
    ASSERT_GE(entries.size(), 250u);
    std::map<std::string, std::array<int, 4>> rate;   // tool -> planned, all, planned fine-tuning jobs, fine-tuning jobs
    for (const Entry& e : entries) {
        SCOPED_TRACE(e.local);
        const spec_test::CliResult plan = run_ftbound(args_for(e, "plan"));
        ASSERT_EQ(plan.signal, 0) << e.local << " crashed: " << describe(plan);
        ASSERT_TRUE(plan.exit_code == 0 || plan.exit_code == 2) << e.local << ": " << describe(plan);
        const bool finetune = e.job == "finetune";
        ++rate[e.tool][1];
        rate[e.tool][3] += finetune;
        std::string first;
        if (e.expect != "plan") {
            // Not planned: exactly one `error: FILE: FIELD: REASON` line, and the one MANIFEST.csv records.
            ASSERT_EQ(plan.exit_code, 2) << e.local << " was expected to fail with " << e.expect << ": " << describe(plan);
            EXPECT_EQ(count_errors(plan.err, first), 1) << e.local << ": " << plan.err;
            EXPECT_TRUE(std::regex_search(first, kErrorLine)) << e.local << ": " << first;
            ASSERT_EQ(e.expect.rfind("error: ", 0), 0u) << "MANIFEST.csv expect: plan or error: FIELD: TEXT";
            // TEXT may skip words with " ... " (a CSV field holds no comma): each piece in order.
            size_t at_char = 0;
            std::string rest = e.expect.substr(7), piece;
            for (bool head = true; !rest.empty(); head = false) {
                const size_t cut = rest.find(" ... ");
                piece = (head ? ": " : "") + rest.substr(0, cut);
                rest = cut == std::string::npos ? "" : rest.substr(cut + 5);
                at_char = first.find(piece, at_char);
                ASSERT_NE(at_char, std::string::npos) << e.local << ": '" << piece << "' not in " << first;
            }
            continue;
        }
        ASSERT_EQ(plan.exit_code, 0) << e.local << " was expected to plan: " << describe(plan);
        ++rate[e.tool][0];
        rate[e.tool][2] += finetune;
        EXPECT_FALSE(std::regex_search(plan.out, kNonFinite)) << e.local << ": " << plan.out.substr(0, 400);
        EXPECT_GT(nlohmann::json::parse(plan.out)["step"]["seconds"].get<double>(), 0) << e.local;
        const spec_test::CliResult imp = run_ftbound(args_for(e, "import"));
        ASSERT_EQ(imp.exit_code, 0) << e.local << ": " << describe(imp);
        check_fields(e, nlohmann::json::parse(imp.out));
    }
    // Measured floors (docs/import.md): planned fine-tuning jobs / fine-tuning jobs per tool. The per-file
    // expectations above already fail on any change; the floors say what the figures in the docs are.
    const std::map<std::string, int> floor = {{"axolotl", 63},    {"llama_factory", 34}, {"torchtune", 42},
                                              {"torchtitan", 18}, {"deepspeed", 33},    {"accelerate", 36},
                                              {"hf", 1}};
    int planned = 0, all = 0, ft_planned = 0, ft_all = 0;
    for (const auto& [tool, r] : rate) {
        std::printf("corpus %-14s %3d / %3d plan; fine-tuning jobs %3d / %3d\n", tool.c_str(), r[0], r[1], r[2], r[3]);
        planned += r[0], all += r[1], ft_planned += r[2], ft_all += r[3];
        EXPECT_GE(r[2], floor.count(tool) ? floor.at(tool) : 1 << 20) << tool << ": fewer fine-tuning jobs plan";
    }
    std::printf("corpus all            %3d / %3d plan; fine-tuning jobs %3d / %3d\n", planned, all, ft_planned, ft_all);
    EXPECT_GE(ft_planned, 227);
}
