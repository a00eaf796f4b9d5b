// Hostile sizes in input files, through the real binary (issue #30): a numeric field with 40,000 digits
// (std::regex recursed once per character and overflowed the stack: exit 139), numbers beyond a double, whole
// numbers beyond int64 (2^63, 1e300), deep nesting and YAML aliases that expand without bound. Every one must
// end in one `error: FILE: FIELD: REASON` line and exit 2, within seconds, never a signal.
#include <gtest/gtest.h>

#include <string>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"
#include "test_paths.hpp"

namespace {

using spec_test::describe;
using spec_test::run_ftbound;

const std::string kDigits(40000, '9');

std::string example_job() { return spec_test::slurp(plan_test::example("llama3.1-8b-lora-r760xa.yaml")); }

// The example job with `micro_batch:` set to `value`.
std::string job_with_micro_batch(const std::string& value) {
    std::string job = example_job();
    const size_t at = job.find("micro_batch:");
    EXPECT_NE(at, std::string::npos);
    const size_t eol = job.find('\n', at);
    return job.replace(at, eol - at, "micro_batch: " + value);
}

void expect_input_error(const spec_test::CliResult& r, const std::string& field, const std::string& reason) {
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err.substr(0, 400);
    EXPECT_NE(r.err.find(field), std::string::npos) << r.err.substr(0, 400);
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err.substr(0, 400);
    EXPECT_LT(r.err.size(), 2000u) << "the error line echoes the whole input";
}

TEST(InputLimits, FortyThousandDigitIntegerInAJobFile) {
    const std::string f = spec_test::write_scratch("long_int.yaml", job_with_micro_batch(kDigits));
    expect_input_error(run_ftbound({"plan", f}), "train.micro_batch", "out of range");
}

TEST(InputLimits, FortyThousandDigitFloatsInAJobFile) {
    // Beyond a double: out of range. Within one (1.999...): the nearest double, 2, as any reader rounds it.
    std::string f = spec_test::write_scratch("long_float.yaml", job_with_micro_batch(kDigits + ".5"));
    expect_input_error(run_ftbound({"plan", f}), "train.micro_batch", "out of range");
    f = spec_test::write_scratch("long_exp.yaml", job_with_micro_batch("1e" + kDigits));
    expect_input_error(run_ftbound({"plan", f}), "train.micro_batch", "out of range");
    f = spec_test::write_scratch("long_fraction.yaml", job_with_micro_batch("1." + kDigits));
    const std::string two = spec_test::write_scratch("two.yaml", job_with_micro_batch("2"));
    const auto r = run_ftbound({"plan", f, "--json"});
    const auto expected = run_ftbound({"plan", two, "--json"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    // The same plan but for the "job" line naming the file.
    auto without_job_line = [](std::string s) { return s.erase(0, s.find('\n', s.find("\"job\""))); };
    EXPECT_EQ(without_job_line(r.out), without_job_line(expected.out));
}

TEST(InputLimits, LongNumbersInSetAndSizes) {
    const std::string job = plan_test::example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error(run_ftbound({"plan", job, "--set", "train.micro_batch=" + kDigits}), "train.micro_batch",
                       "out of range");
    expect_input_error(run_ftbound({"plan", job, "--set", "train.seq_len=-" + kDigits + ".0e1"}), "train.seq_len",
                       "out of range");
    expect_input_error(run_ftbound({"plan", job, "--set",
                                    "hardware={gpu: h100-sxm, gpus_per_node: 8, host: {memory: " + kDigits + "GiB}}"}),
                       "hardware.host.memory", "expected a size");
}

// A system file (hardware.system: PATH) whose host memory and GPU count hold 40,000 digits.
TEST(InputLimits, LongNumbersInASystemFile) {
    const std::string system = spec_test::slurp(std::string(ftb_test::source_dir()) +
                                                "/data/systems/dell-poweredge-r760xa-4x-h100-pcie.yaml");
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"host_memory:", kDigits + "GiB"},
                                     {"gpus_per_node:", kDigits}}) {
        std::string text = system;
        const size_t at = text.find(key);
        ASSERT_NE(at, std::string::npos) << key;
        text.replace(at, text.find('\n', at) - at, key + " " + value);
        const std::string f = spec_test::write_scratch("long_system.yaml", text);
        const auto r = run_ftbound({"plan", plan_test::example("llama3.1-8b-lora-r760xa.yaml"), "--set",
                                    "hardware.system=" + f});
        expect_input_error(r, key.substr(0, key.size() - 1), "");
        EXPECT_NE(r.err.find("long_system.yaml"), std::string::npos) << r.err.substr(0, 400);
    }
}

// Import configs: a 40,000-digit batch size in an axolotl and a torchtune config, and in HF TrainingArguments.
TEST(InputLimits, LongNumbersInImportedConfigs) {
    const std::string dir = std::string(ftb_test::test_data()) + "/import/";
    const std::pair<const char*, const char*> cases[] = {{"axolotl_llama3_qlora.yml", "micro_batch_size:"},
                                                         {"torchtune_llama3_1_8B_lora_single_device.yaml", "batch_size:"},
                                                         {"hf_training_args_zero3.json", "\"per_device_train_batch_size\":"}};
    for (const auto& [name, key] : cases) {
        std::string text = spec_test::slurp(dir + name);
        const size_t at = text.find(key);
        ASSERT_NE(at, std::string::npos) << name;
        const size_t end = text.find_first_of(",\n", at);
        text.replace(at, end - at, std::string(key) + " " + kDigits);
        const std::string f = spec_test::write_scratch(std::string("long_") + name, text);
        const auto r = run_ftbound({"import", f});
        expect_input_error(r, "", "");
    }
}

// validate's cases.csv: a 40,000-digit measured figure.
TEST(InputLimits, LongNumberInACasesFile) {
    const std::string job = plan_test::example("llama3.1-8b-lora-r760xa.yaml");
    const std::string csv = spec_test::write_scratch(
        "long_cases.csv", "id,job,quantity,measured,unit,source,note\nc1," + job +
                              ",allocated_peak,"+ kDigits + ",GiB,test,\nc2," + job + ",allocated_peak," + kDigits + ".5e7,GiB,test,\n");
    expect_input_error(run_ftbound({"validate", csv}), "measured", "");
}

TEST(InputLimits, WholeNumbersBeyondInt64) {
    const std::string job = plan_test::example("llama3.1-8b-lora-r760xa.yaml");
    for (const char* v : {"1e300", "9223372036854775808", "-9223372036854775809", "1.0e19"})
        expect_input_error(run_ftbound({"plan", job, "--set", std::string("train.micro_batch=") + v}),
                           "train.micro_batch", "out of range");
    const std::string cfg = spec_test::write_scratch(
        "layers_2_63.json", R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 9223372036854775808, "num_attention_heads": 4, "vocab_size": 100})");
    const auto r = run_ftbound({"model", cfg}, 20, rlim_t(512) << 20);
    expect_input_error(r, "num_hidden_layers", "out of range");
    const std::string big = spec_test::write_scratch(
        "layers_long.json", R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": )" +
                                kDigits + R"(, "num_attention_heads": 4, "vocab_size": 100})");
    expect_input_error(run_ftbound({"model", big}, 20, rlim_t(512) << 20), "num_hidden_layers", "out of range");
}

TEST(InputLimits, DeepNestingEveryReader) {
    const std::string deep = std::string(100000, '[');
    for (const char* name : {"deep.yaml", "deep.json"}) {
        const std::string f = spec_test::write_scratch(name, "model: " + deep);
        const auto r = run_ftbound({"plan", f});
        EXPECT_EQ(r.signal, 0) << describe(r);
        EXPECT_EQ(r.exit_code, 2) << describe(r);
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err.substr(0, 400);
    }
    const std::string cfg = spec_test::write_scratch("deep_config.json", deep);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"model", cfg}, {"import", cfg},
                                                  {"plan", plan_test::example("llama3.1-8b-lora-r760xa.yaml"), "--set", "train=" + deep}}) {
        const auto r = run_ftbound(args);
        EXPECT_EQ(r.signal, 0) << describe(r);
        EXPECT_EQ(r.exit_code, 2) << describe(r);
    }
    const std::string toml = spec_test::write_scratch("deep.toml", "a = " + deep);
    const auto r = run_ftbound({"import", toml});
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
}

TEST(InputLimits, BillionLaughsIsAnInputError) {
    std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; ++i) {
        const std::string p = "*a" + std::to_string(i - 1);
        yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p + ", " + p + ", " +
                p + ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
    }
    const std::string f = spec_test::write_scratch("laughs.yaml", yaml + "model: x\n");
    const auto r = run_ftbound({"plan", f}, 30, rlim_t(2) << 30);
    expect_input_error(r, "laughs.yaml", "aliases");
    EXPECT_LT(r.seconds, 20);
}

}  // namespace

namespace {

// diagnose on a Kineto trace with a 40,000-digit duration, timestamp, device memory and correlation id, and
// with 100,000 nested '[': an error line or a diagnosis, never a signal.
TEST(InputLimits, LongNumbersAndDeepNestingInATrace) {
    const std::string trace = spec_test::slurp(std::string(ftb_test::test_data()) + "/traces/hand_new_style.json");
    const std::pair<std::string, std::string> cases[] = {{"\"dur\": 100", "\"dur\": " + kDigits},
                                                         {"\"ts\": 123456789.125", "\"ts\": " + kDigits + ".5"},
                                                         {"\"totalGlobalMem\": 85029158912", "\"totalGlobalMem\": " + kDigits},
                                                         {"\"correlation\": 1", "\"correlation\": " + kDigits}};
    for (const auto& [from, to] : cases) {
        std::string text = trace;
        const size_t at = text.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
        const auto r = run_ftbound({"diagnose", spec_test::write_scratch("long_trace.json", text)});
        EXPECT_EQ(r.signal, 0) << from << describe(r);
        EXPECT_TRUE(r.exit_code == 0 || (r.exit_code == 2 && r.err.rfind("error: ", 0) == 0)) << from << describe(r);
        EXPECT_LT(r.err.size(), 2000u);
    }
    expect_input_error(run_ftbound({"diagnose", spec_test::write_scratch("long_trace.json", "{\"traceEvents\": [" + kDigits + "]}")}),
                       "traceEvents[0]", "");
    expect_input_error(run_ftbound({"diagnose", spec_test::write_scratch("deep_trace.json",
                                                                         "{\"traceEvents\": " + std::string(100000, '['))}),
                       "traceEvents", "");
}

}  // namespace
