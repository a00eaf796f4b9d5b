// The command line as a new user meets it: typos get suggestions, --set errors name the --set, --version,
// --csv, probe --out refuses an unwritable file before probing, over-capacity reads "over by", unknown power
// reads "unknown", diagnose --plan warns when trace and job differ and advises on the measured bottleneck,
// and `cmake --install` gives a binary that finds its catalog without the build tree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "spec_test_util.hpp"
#include "test_paths.hpp"

using spec_test::describe;
using spec_test::run_ftbound;

namespace {

const std::string kExamples = std::string(ftb_test::source_dir()) + "/examples/";

TEST(CliPolish, TyposGetSuggestions) {
    spec_test::CliResult r = run_ftbound({"plna", kExamples + "llama3.1-8b-lora-r760xa.yaml"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("did you mean `ftbound plan`"), std::string::npos) << r.err;
    r = run_ftbound({"plan", kExamples + "llama3.1-8b-lora-r760xa.yaml", "--jsno"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--jsno: did you mean '--json'"), std::string::npos) << r.err;
    r = run_ftbound({"catalog", "--jsn"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("did you mean '--json'"), std::string::npos) << r.err;
}

TEST(CliPolish, BadSetValueNamesTheSet) {
    spec_test::CliResult r = run_ftbound({"plan", kExamples + "llama3.1-8b-lora-r760xa.yaml", "--set", "train.micro_batch=two"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err.rfind("error: --set train.micro_batch=two: train.micro_batch: expected a whole number", 0), 0u) << r.err;
    r = run_ftbound({"plan", kExamples + "llama3.1-8b-lora-r760xa.yaml", "--set", "hardware.system=xe9860"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--set hardware.system=xe9860: hardware.system: unknown system 'xe9860'"), std::string::npos) << r.err;
}

TEST(CliPolish, Version) {
    spec_test::CliResult r = run_ftbound({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out.rfind("ftbound ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find('.'), std::string::npos) << r.out;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
            else if (c == '"') quoted = false;
            else cell += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            row.push_back(cell), cell.clear();
        } else if (c == '\n') {
            row.push_back(cell), cell.clear(), rows.push_back(row), row.clear();
        } else if (c != '\r') {
            cell += c;
        }
    }
    return rows;
}

TEST(CliPolish, PlanAndValidateCsv) {
    const std::string job = kExamples + "llama3.1-8b-lora-r760xa.yaml";
    spec_test::CliResult r = run_ftbound({"plan", job, "--csv"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto rows = csv_rows(r.out);
    ASSERT_EQ(rows.size(), 2u) << r.out.substr(0, 400);
    ASSERT_EQ(rows[0].size(), rows[1].size());
    const nlohmann::json j = nlohmann::json::parse(run_ftbound({"plan", job, "--json"}).out);
    for (size_t i = 0; i < rows[0].size(); ++i) {
        if (rows[0][i] == "memory.allocated_peak_bytes") {
            EXPECT_EQ(rows[1][i], j["memory"]["allocated_peak_bytes"].dump());
        }
        if (rows[0][i] == "step.seconds") {
            EXPECT_DOUBLE_EQ(std::stod(rows[1][i]), j["step"]["seconds"].get<double>());
        }
        if (rows[0][i] == "bottleneck.resource") {
            EXPECT_EQ(rows[1][i], j["bottleneck"]["resource"]);
        }
    }
    EXPECT_EQ(run_ftbound({"plan", job, "--csv", "--json"}).exit_code, 2);

    spec_test::write_scratch("csv_validate/job.yaml", spec_test::slurp(job));
    spec_test::write_scratch("csv_validate/cases.csv", "id,job,quantity,measured,unit,source,note\n"
                                                       "a,job.yaml,tokens_per_second_per_gpu,5000,tokens/s,test,\n"
                                                       "b,missing.yaml,step_seconds,1,s,test,\n"
                                                       "c,job.yaml,allocated_peak,1,GiB,test,\n");
    r = run_ftbound({"validate", spec_test::scratch_dir() + "/csv_validate/cases.csv", "--csv"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const auto v = csv_rows(r.out);
    ASSERT_EQ(v.size(), 4u) << r.out;
    EXPECT_EQ(v[0], (std::vector<std::string>{"id", "source", "quantity", "quality", "unit", "measured", "predicted",
                                              "error_percent", "band_low", "band_high", "in_band", "skipped"}));
    EXPECT_EQ(v[1][0], "a");
    EXPECT_FALSE(v[1][6].empty());
    EXPECT_TRUE(v[1][8].empty());     // a time quantity has no band
    EXPECT_TRUE(v[2][6].empty());     // not predicted: no number, the reason instead
    EXPECT_FALSE(v[2][11].empty());
    // A memory figure carries the plan's band around its prediction, and says whether the measured value is inside.
    ASSERT_FALSE(v[3][6].empty());
    const double predicted = std::stod(v[3][6]), low = std::stod(v[3][8]), high = std::stod(v[3][9]);
    EXPECT_LT(low, predicted);
    EXPECT_GT(high, predicted);
    EXPECT_LE(high - predicted, 0.10 * predicted + 1e-9);   // never wider than +/-10% of the figure
    EXPECT_EQ(v[3][10], (1 >= low && 1 <= high) ? "true" : "false");

    // Several cases files are for fitting the band only; the fit reports the memory case of quality high/medium
    // (without a quality column no case is marked low, so each counts).
    const std::string cases = spec_test::scratch_dir() + "/csv_validate/cases.csv";
    r = run_ftbound({"validate", cases, cases});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("several only with --fit-band"), std::string::npos) << r.err;
    r = run_ftbound({"validate", cases, cases, "--fit-band"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("memory band over 2 cases"), std::string::npos) << r.out;
}

TEST(CliPolish, ProbeOutIsCheckedBeforeProbing) {
    spec_test::CliResult r = run_ftbound({"probe", "--quick", "--out", "/proc/ftbound-probe-test.yaml"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find("cannot write there"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 5.0) << "it probed before refusing";
    r = run_ftbound({"probe", "--quick", "--out", spec_test::scratch_dir()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
}

// A plan on a CPU server speaks of RAM, sockets, DDR and cores: none of the GPU words (issue #13, item 2).
TEST(CliPolish, CpuPlanSpeaksCpu) {
    for (const char* example : {"llama3.1-8b-lora-r760xa.yaml", "llama3.1-70b-full-8xh100-unsharded.yaml"}) {
        const spec_test::CliResult r =
            run_ftbound({"plan", kExamples + example, "--set", "hardware.system=dell-poweredge-r760-2x-xeon-8480"});
        ASSERT_EQ(r.exit_code, 0) << describe(r);
        for (const char* gpu_word : {"GPU", "HBM", "CUDA", "tensor-core", "nvidia-smi", "NVLink", "kernel launch"})
            EXPECT_EQ(r.out.find(gpu_word), std::string::npos) << gpu_word << " in\n" << r.out;
        EXPECT_NE(r.out.find("RAM headroom at the peak"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("per socket"), std::string::npos) << r.out;
    }
}

TEST(CliPolish, OverCapacityAndUnknownPower) {
    spec_test::CliResult r = run_ftbound({"plan", kExamples + "llama3.1-70b-full-8xh100-unsharded.yaml"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("GPU memory headroom at the peak: over by "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("% of the GPU memory left"), std::string::npos);
    // A device without power figures (as a probe of a machine whose power limit could not be read writes it).
    const std::string job = spec_test::write_scratch(
        "no_power.yaml",
        "model: meta-llama/Llama-3.2-1B\ntrain: {method: lora, seq_len: 1024}\n"
        "hardware: {gpu: {name: lab-gpu, memory: 48GiB, memory_bandwidth_GBps: 900, sm_count: 100, tflops: {fp32: 40, bf16: 180}}}\n");
    r = run_ftbound({"plan", job});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.out.find("power: unknown"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("power: 0 W"), std::string::npos) << r.out;
}

TEST(CliPolish, DiagnoseWarnsWhenTraceAndJobDiffer) {
    // The trace ran on eight H100 80GB; the job plans Llama 3.1 8B on A100s: another GPU, and a step far off.
    const std::string job = spec_test::write_scratch(
        "diagnose_other_gpu.yaml",
        "model: meta-llama/Llama-3.1-8B\ntrain: {method: lora, micro_batch: 1, seq_len: 2048, activation_checkpointing: full}\n"
        "hardware: {system: dgx-a100}\n");
    spec_test::CliResult r = run_ftbound(
        {"diagnose", std::string(ftb_test::test_data()) + "/traces/hand_new_style.json", "--plan", job, "--json"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.err.find("warning: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the trace ran on 'NVIDIA H100 80GB HBM3'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("x the predicted one"), std::string::npos) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["plan"]["warnings"].size(), 2u);
    EXPECT_TRUE(j["plan"]["advice"].is_array());
    r = run_ftbound({"diagnose", std::string(ftb_test::test_data()) + "/traces/hand_new_style.json", "--plan", job});
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("what to change for the measured bottleneck"), std::string::npos) << r.out;
}

TEST(CliPolish, InstalledBinaryFindsItsCatalog) {
    namespace fs = std::filesystem;
    const std::string prefix = spec_test::scratch_dir() + "/prefix";
    const std::string cmd = std::string("\"") + ftb_test::cmake() + "\" --install \"" + ftb_test::build_dir() + "\" --prefix \"" + prefix +
                            "\" > \"" + prefix + ".log\" 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << spec_test::slurp(prefix + ".log");
    ASSERT_TRUE(fs::exists(prefix + "/bin/ftbound"));
    ASSERT_TRUE(fs::exists(prefix + "/share/ftbound/data/models/meta-llama/Llama-3.1-8B.json"));
    const std::string out = prefix + ".out";
    const std::string run = "env -u FTBOUND_DATA \"" + prefix + "/bin/ftbound\" catalog systems > \"" + out + "\" 2>&1";
    ASSERT_EQ(std::system(run.c_str()), 0) << spec_test::slurp(out);
    const std::string text = spec_test::slurp(out);
    EXPECT_NE(text.find("in " + prefix + "/share/ftbound/data"), std::string::npos) << text.substr(0, 300);
    fs::remove_all(prefix);
}

}  // namespace
