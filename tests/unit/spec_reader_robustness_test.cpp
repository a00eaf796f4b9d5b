// The YAML/JSON reader (ftb::parse_yaml_text, load_document), the HF config reader
// (ftb::model_from_hf_config) and the job reader (ftb::job_from_document) on hostile input: random bytes,
// truncated files, mutated files and deep nesting. Any outcome but a value or ftb::InputError is a
// finding (a crash, another exception type, a hang). Seeded, so every failure reproduces; the libFuzzer
// target fuzz/spec_reader_fuzz.cpp runs the same harness open-ended in the slow tier.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "ftbound/error.hpp"
#include "spec/document.hpp"
#include "spec/hf_config.hpp"
#include "spec/job_file.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;

namespace {

struct Findings {
    int inputs = 0, input_errors = 0, accepted = 0, skipped = 0;
    std::vector<std::string> failures;   // "what: exception" with the input, first few only
    void fail(const std::string& what, const std::string& input) {
        if (failures.size() < 5) failures.push_back(what + "\n  input (" + std::to_string(input.size()) + " bytes): " +
                                                    input.substr(0, 300));
        else failures.push_back(what);
    }
};

// A config whose layer count would make the reader allocate per layer beyond what a test may use
// (a separate test, HugeLayerCountIsAnInputError, covers that case through the CLI with a memory cap).
bool too_many_layers(const ftb::Json& doc) {
    for (const char* k : {"num_hidden_layers", "n_layer", "n_layers", "num_layers", "num_decoder_layers"})
        if (doc.contains(k) && doc[k].is_number() && doc[k].get<double>() > 1e5) return true;
    return false;
}

// One input through every reader that accepts it.
void exercise(const std::string& text, const std::string& label, Findings& f) {
    ++f.inputs;
    ftb::Json doc;
    try {
        doc = ftb::parse_yaml_text(text, label);
    } catch (const ftb::InputError& e) {
        ++f.input_errors;
        if (std::string(e.what()).empty()) f.fail("empty InputError message", text);
        return;
    } catch (const std::exception& e) {
        f.fail(std::string("parse_yaml_text threw ") + typeid(e).name() + ": " + e.what(), text);
        return;
    }
    if (!doc.is_object()) {
        ++f.accepted;
        return;
    }
    if (too_many_layers(doc)) {
        ++f.skipped;
        return;
    }
    try {
        ftb::ModelSpec m = ftb::model_from_hf_config(ftb::Fields(doc, label, ""), label);
        ++f.accepted;
        if (m.layers.empty()) f.fail("model_from_hf_config accepted a model with no layers", text);
        if (m.total_params() <= 0) f.fail("non-positive parameter count " + std::to_string(m.total_params()), text);
    } catch (const ftb::InputError&) {
        ++f.input_errors;
    } catch (const std::exception& e) {
        f.fail(std::string("model_from_hf_config threw ") + typeid(e).name() + ": " + e.what(), text);
    }
    if (doc.contains("train") || doc.contains("hardware")) {
        try {
            ftb::job_from_document(doc, label);
        } catch (const ftb::InputError&) {
        } catch (const std::exception& e) {
            f.fail(std::string("job_from_document threw ") + typeid(e).name() + ": " + e.what(), text);
        }
    }
}

std::vector<std::string> seed_texts() {
    std::vector<std::string> out;
    const fs::path src(ftb_test::source_dir());
    for (const fs::path& dir : {src / "data" / "models", src / "examples", fs::path(ftb_test::test_data()) / "spec"})
        for (auto& e : fs::recursive_directory_iterator(dir))
            if (e.is_regular_file() && (e.path().extension() == ".json" || e.path().extension() == ".yaml"))
                out.push_back(spec_test::slurp(e.path().string()));
    return out;
}

void report(const Findings& f) {
    std::string all;
    for (const auto& s : f.failures) all += "\n- " + s;
    EXPECT_TRUE(f.failures.empty()) << f.failures.size() << " of " << f.inputs << " inputs failed:" << all;
}

TEST(SpecReaderRobustness, RandomBytes) {
    std::mt19937_64 rng(20240611);
    Findings f;
    // Bytes drawn from YAML's punctuation as well as anywhere in 0..255, so the parser gets past line 1.
    const std::string yamlish = "[]{}:,-?&*!|>'\"#%@`\n\t abz019.e+";
    for (int i = 0; i < 1500; ++i) {
        std::string s(rng() % 300, '\0');
        const bool punct = i % 2 == 0;
        for (char& c : s) c = punct ? yamlish[rng() % yamlish.size()] : static_cast<char>(rng() % 256);
        exercise(s, "random", f);
    }
    report(f);
    EXPECT_GT(f.input_errors, 0);
}

TEST(SpecReaderRobustness, TruncatedFiles) {
    Findings f;
    for (const std::string& text : seed_texts())
        for (int k = 0; k < 24; ++k) exercise(text.substr(0, text.size() * k / 24), "truncated", f);
    report(f);
    EXPECT_GT(f.accepted, 0);
    EXPECT_GT(f.input_errors, 0);
}

TEST(SpecReaderRobustness, MutatedFiles) {
    const std::vector<std::string> seeds = seed_texts();
    ASSERT_GT(seeds.size(), 30u);
    // Tokens that steer the parser into its corners: flow/block switches, anchors, tags, documents,
    // directives, numbers at the edges of int64 and double.
    const std::vector<std::string> tokens = {
        "[", "]", "{", "}", ": ", ", ", "- ", "? ", "&x ", "*x", "!!str ", "!!binary ", "!x ", "---\n", "...\n",
        "%YAML 1.2\n", "\"", "'", "\\u0000", "#", "|\n", ">-\n", "\t", "\r\n", "~", "null", "true", "-1", "0",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e308", "1e400", "1e-400", ".nan",
        ".inf", "0x1F", "0o17", "1_000", "<<: *x\n", "\xef\xbb\xbf", "\xff\xfe", "\xc3\x28"};
    std::mt19937_64 rng(7);
    Findings f;
    for (int i = 0; i < 2500; ++i) {
        std::string s = seeds[rng() % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits && !s.empty(); ++e) {
            const size_t at = rng() % s.size();
            switch (rng() % 4) {
                case 0: s[at] = static_cast<char>(rng() % 256); break;                            // flip a byte
                case 1: s.erase(at, 1 + rng() % 40); break;                                       // cut a slice
                case 2: s.insert(at, tokens[rng() % tokens.size()]); break;                       // insert a token
                case 3: s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 60)); break;         // repeat a slice
            }
        }
        exercise(s, "mutated", f);
    }
    report(f);
    EXPECT_GT(f.input_errors, 100);
}

TEST(SpecReaderRobustness, DeepNestingIsAnInputError) {
    Findings f;
    for (int depth : {63, 64, 65, 66, 200, 5000, 100000}) {
        exercise(std::string(depth, '[') + std::string(depth, ']'), "lists", f);
        std::string maps;
        for (int i = 0; i < depth; ++i) maps += "{a: ";
        exercise(maps + "1" + std::string(depth, '}'), "maps", f);
        exercise("model_type: llama\nhidden_size: " + std::string(depth, '[') + std::string(depth, ']'), "field", f);
    }
    report(f);
    // 64 levels of lists are read; deeper ones are refused with the reason.
    EXPECT_NO_THROW(ftb::parse_yaml_text(std::string(64, '[') + std::string(64, ']'), "x"));
    try {
        ftb::parse_yaml_text(std::string(66, '[') + std::string(66, ']'), "deep.yaml");
        ADD_FAILURE() << "66 levels accepted";
    } catch (const ftb::InputError& e) {
        EXPECT_EQ(e.file(), "deep.yaml");
        EXPECT_NE(e.reason().find("deeper than 64"), std::string::npos) << e.what();
    }
}

// Found by spec_reader_fuzz (a torchtune recipe with a stray 0xFB byte in a LoRA module name): the reader passed
// bytes that are not UTF-8 through, and the import report printed them with nlohmann::json dump, which throws
// type_error 316 ("internal error" from the CLI). The reader (libyaml's) refuses them anywhere in the text, with
// the byte's line and column; so are the control characters YAML does not allow.
TEST(SpecReaderRobustness, TextThatIsNotUtf8IsAnInputError) {
    auto error_of = [](const std::string& text) -> std::string {
        try {
            ftb::parse_yaml_text(text, "t.yaml");
        } catch (const ftb::InputError& e) {
            return e.reason();
        }
        return "(accepted)";
    };
    EXPECT_EQ(error_of("model:\n  lora_attn_modules: [q_proj, \"\xFBv_proj\"]\n"),
              "not UTF-8 text (invalid leading UTF-8 octet 0xFB at line 2, column 32): save the file as UTF-8");
    EXPECT_NE(error_of("a: b\xFB\n").find("0xFB at line 1, column 5"), std::string::npos);
    EXPECT_NE(error_of("k\xFB: 1\n").find("not UTF-8 text"), std::string::npos);
    EXPECT_NE(error_of("# caf\xE9\na: 1\n").find("at line 1,"), std::string::npos);   // in a comment too
    EXPECT_NE(error_of("a: \xC0\xAF\n").find("not UTF-8 text"), std::string::npos);           // overlong '/'
    EXPECT_NE(error_of("a: \xED\xA0\x80\n").find("not UTF-8 text"), std::string::npos);       // UTF-16 surrogate
    EXPECT_NE(error_of("a: \xF4\x90\x80\x80\n").find("not UTF-8 text"), std::string::npos);   // above U+10FFFF
    EXPECT_NE(error_of("a: \xE2\x82\n").find("not UTF-8 text"), std::string::npos);            // cut short
    EXPECT_EQ(error_of("a: 1\nb: x\x01\n"),
              "a control character 0x01 at line 2, column 5: YAML text takes tabs, line breaks and printable characters only");
    // UTF-8 of every length is read.
    EXPECT_EQ(error_of("\xC3\xA9t\xC3\xA9: \xE2\x82\xAC \xF0\x9F\x98\x80\n"), "(accepted)");
    ftb::Json job = ftb::Json::object();
    EXPECT_THROW(ftb::apply_override(job, "train.\xFB=1", "job.yaml"), ftb::InputError);
}

TEST(SpecReaderRobustness, LoadDocumentErrors) {
    const std::string dir = spec_test::scratch_dir();
    auto reason_of = [](const std::string& path) -> std::string {
        try {
            ftb::load_document(path);
        } catch (const ftb::InputError& e) {
            EXPECT_EQ(e.file(), path);
            return e.reason();
        }
        return "accepted";
    };
    EXPECT_NE(reason_of(dir + "/missing.yaml").find("cannot open"), std::string::npos);
    EXPECT_NE(reason_of(spec_test::write_scratch("nul.yaml", std::string("a: 1\0b", 6))).find("NUL"), std::string::npos);
    EXPECT_NE(reason_of(spec_test::write_scratch("big.yaml", std::string((16u << 20) + 1, ' '))).find("larger than 16 MiB"),
              std::string::npos);
    const std::string folder_reason = reason_of(dir);
    EXPECT_NE(folder_reason, "accepted");
    EXPECT_EQ(folder_reason.find("larger than 16 MiB"), std::string::npos)
        << "BUG: load_document on a folder says: " << folder_reason;
    // Exactly 16 MiB of comment is still read.
    EXPECT_NO_THROW(ftb::load_document(spec_test::write_scratch("limit.yaml", "#" + std::string((16u << 20) - 1, 'x'))));
}

// The scalar resolution the job reader relies on (YAML 1.2 core schema).
TEST(SpecReaderRobustness, ScalarTypes) {
    const ftb::Json j = ftb::parse_yaml_text(
        "i: 42\nneg: -7\nf: 2.5\ne: 1.0e8\nbig: 99999999999999999999\nt: true\nn: ~\ns: '42'\nq: \"true\"\nw: yes\n"
        "hex: 0x10\n",
        "x");
    EXPECT_TRUE(j["i"].is_number_integer());
    EXPECT_EQ(j["i"], 42);
    EXPECT_EQ(j["neg"], -7);
    EXPECT_DOUBLE_EQ(j["f"].get<double>(), 2.5);
    EXPECT_DOUBLE_EQ(j["e"].get<double>(), 1e8);
    EXPECT_TRUE(j["big"].is_number_float());
    EXPECT_EQ(j["t"], true);
    EXPECT_TRUE(j["n"].is_null());
    EXPECT_EQ(j["s"], "42");      // quoted: a string
    EXPECT_EQ(j["q"], "true");
    EXPECT_EQ(j["w"], "yes");     // YAML 1.2: not a boolean
    EXPECT_EQ(j["hex"], "0x10");  // not a core-schema integer here: read as a string, then refused where a number is needed
    for (const char* text : {"x: 1e400", "x: -1e400", "x: 1e-400", "x: 0.0000001e-330"}) {
        try {
            ftb::Json v = ftb::parse_yaml_text(text, "x");
            EXPECT_TRUE(v["x"].is_string() || std::isfinite(v["x"].get<double>())) << text;
        } catch (const ftb::InputError&) {
        } catch (const std::exception& e) {
            ADD_FAILURE() << "BUG (document.cpp resolve_plain_scalar: std::stod out_of_range escapes): '" << text
                          << "' threw " << typeid(e).name() << ": " << e.what();
        }
    }
}

TEST(SpecReaderRobustness, SizeParsing) {
    struct Case { const char* text; double bytes; };
    for (const Case& c : {Case{"96GiB", 96.0 * (1ull << 30)}, Case{"80GB", 80e9}, Case{"80 GB", 80e9},
                          Case{" 1.5TiB ", 1.5 * (1ull << 40)}, Case{"512MiB", 512.0 * (1 << 20)}, Case{"2KB", 2000},
                          Case{"4096", 4096}, Case{"100B", 100}, Case{"1e9", 1e9}, Case{".5GB", 0.5e9}}) {
        auto v = ftb::parse_size_bytes(c.text);
        ASSERT_TRUE(v.has_value()) << c.text;
        EXPECT_DOUBLE_EQ(*v, c.bytes) << c.text;
    }
    for (const char* bad : {"80 GX", "", "GiB", "-5GiB", "80gib", "80 G", "1,5GB", "80GiBs", "0x10", "nan", "inf"})
        EXPECT_FALSE(ftb::parse_size_bytes(bad).has_value()) << "'" << bad << "'";
    for (const char* huge : {"1e400GiB", "1e400", "1e-400"}) {
        try {
            auto v = ftb::parse_size_bytes(huge);
            EXPECT_TRUE(!v || std::isfinite(*v)) << huge;
        } catch (const std::exception& e) {
            ADD_FAILURE() << "BUG (document.cpp parse_size_bytes: std::stod out_of_range escapes): '" << huge << "' threw "
                          << e.what();
        }
    }
}

TEST(SpecReaderRobustness, DidYouMean) {
    EXPECT_EQ(ftb::did_you_mean("trian", {"model", "train", "parallel"}), "train");
    EXPECT_EQ(ftb::did_you_mean("MICRO_BATCH", {"micro_batch", "global_batch"}), "micro_batch");
    EXPECT_EQ(ftb::did_you_mean("zzzzzz", {"model", "train"}), "");
    EXPECT_EQ(ftb::did_you_mean("x", {}), "");
}

TEST(SpecReaderRobustness, ApplyOverride) {
    ftb::Json doc = ftb::parse_yaml_text("train: {seq_len: 1}\nmodel: m\n", "job.yaml");
    ftb::apply_override(doc, "train.seq_len=4096", "job.yaml");
    ftb::apply_override(doc, "train.lora={rank: 8, targets: [q_proj]}", "job.yaml");
    ftb::apply_override(doc, "data.tokens=1e9", "job.yaml");          // creates the section
    ftb::apply_override(doc, "train.note=a=b", "job.yaml");           // the first '=' splits
    EXPECT_EQ(doc["train"]["seq_len"], 4096);
    EXPECT_EQ(doc["train"]["lora"]["rank"], 8);
    EXPECT_EQ(doc["train"]["lora"]["targets"][0], "q_proj");
    EXPECT_DOUBLE_EQ(doc["data"]["tokens"].get<double>(), 1e9);
    EXPECT_EQ(doc["train"]["note"], "a=b");
    auto error_of = [&](const std::string& a) -> ftb::InputError {
        try {
            ftb::apply_override(doc, a, "job.yaml");
        } catch (const ftb::InputError& e) {
            return e;
        }
        return ftb::InputError("", "", "accepted");
    };
    EXPECT_EQ(error_of("foo").file(), "--set");
    EXPECT_EQ(error_of("model.x=1").field(), "model.x");
    EXPECT_NE(error_of("model.x=1").reason().find("'model' is a string"), std::string::npos);
    EXPECT_NE(error_of("a..b=1").reason().find("empty component"), std::string::npos);
    EXPECT_NE(error_of("a.=1").reason().find("empty component"), std::string::npos);
    EXPECT_NE(error_of("x={").reason().find("malformed"), std::string::npos);
    ftb::Json list = ftb::Json::array();
    try {
        ftb::apply_override(list, "a=1", "job.yaml");
        ADD_FAILURE() << "override on a list document accepted";
    } catch (const ftb::InputError& e) {
        EXPECT_EQ(e.file(), "job.yaml");
    }
}

// The merge key, as PyYAML applies it to the configs the frameworks read: a mapping's own keys win wherever they
// appear, then the merged mappings in order; quoted "<<" is an ordinary key; anything but mappings is refused.
TEST(SpecReaderRobustness, MergeKeyMergesMappings) {
    const ftb::Json one = ftb::parse_yaml_text("d: &d {a: 1, b: 2}\nm:\n  b: 3\n  <<: *d\n  c: 4\n", "t.yaml");
    EXPECT_EQ(one["m"], ftb::Json::parse(R"({"a": 1, "b": 3, "c": 4})"));
    const ftb::Json list = ftb::parse_yaml_text("m: {<<: [{a: 1, b: 1}, {b: 2, c: 2}], c: 3}\n", "t.yaml");
    EXPECT_EQ(list["m"], ftb::Json::parse(R"({"a": 1, "b": 1, "c": 3})"));
    EXPECT_EQ(ftb::parse_yaml_text("m: {\"<<\": 1}\n", "t.yaml")["m"], ftb::Json::parse(R"({"<<": 1})"));
    try {
        ftb::parse_yaml_text("m: {<<: [1, 2]}\n", "t.yaml");
        ADD_FAILURE() << "a merge of numbers was accepted";
    } catch (const ftb::InputError& e) {
        EXPECT_EQ(e.field(), "m.<<");
        EXPECT_NE(e.reason().find("takes a mapping or a list of mappings"), std::string::npos) << e.what();
    }
}

}  // namespace
