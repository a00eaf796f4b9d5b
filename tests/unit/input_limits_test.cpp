// Hostile sizes in input files, through the real binary (issue #30): a numeric field with 40,000 digits
// (std::regex recursed once per character and overflowed the stack: exit 139), numbers beyond a double, whole
// numbers beyond int64 (2^63, 1e300), deep nesting and YAML aliases that expand without bound. Every one must
// end in one `error: FILE: FIELD: REASON` line and exit 2, within seconds, never a signal.
#include <gtest/gtest.h>

#include <string>

#include "plan_test_util.hpp"
#include "spec_test_util.hpp"

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
    const auto r = run_ftbound({"plan", f, "--json"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("\"micro_batch\": 2"), std::string::npos) << r.out.substr(0, 2000);
}

TEST(InputLimits, LongNumbersInSetAndSizes) {
    const std::string job = plan_test::example("llama3.1-8b-lora-r760xa.yaml");
    expect_input_error(run_ftbound({"plan", job, "--set", "train.micro_batch=" + kDigits}), "train.micro_batch",
                       "out of range");
    expect_input_error(run_ftbound({"plan", job, "--set", "train.seq_len=-" + kDigits + ".0e1"}), "train.seq_len",
                       "out of range");
    expect_input_error(run_ftbound({"plan", job, "--set", "hardware.host.memory=" + kDigits + "GiB"}),
                       "hardware.host.memory", "expected a size");
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
