// Accuracy notes (src/ops/accuracy_notes.*): a plan outside what validation/ measured says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "ops/accuracy_notes.hpp"
#include "plan_test_util.hpp"
#include "spec/catalog.hpp"
#include "validate/validation.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

namespace fs = std::filesystem;
using namespace plan_test;

bool mentions(const std::vector<std::string>& notes, const std::string& text) {
    for (const auto& n : notes)
        if (n.find(text) != std::string::npos) return true;
    return false;
}

TEST(OpsAccuracyNotes, ValidatedArchitecturesAreThoseOfTheValidationJobs) {
    // Every `gpu: NAME` of the public validation jobs, by architecture.
    std::set<std::string> seen;
    const std::regex gpu_line(R"(^\s*gpu:\s*([A-Za-z0-9._-]+))");
    for (const char* dir : {"validation/jobs", "validation/qwen/jobs"})
        for (const auto& e : fs::directory_iterator(fs::path(ftb_test::source_dir()) / dir)) {
            std::ifstream in(e.path());
            for (std::string line; std::getline(in, line);) {
                std::smatch m;
                if (std::regex_search(line, m, gpu_line))
                    seen.insert(to_string(gpu_arch(Catalog::instance().gpu(m[1], {e.path().string(), "gpu"}))));
            }
        }
    std::set<std::string> listed;
    for (GpuArch a : validated_gpu_architectures()) listed.insert(to_string(a));
    EXPECT_EQ(seen, listed);
}

TEST(OpsAccuracyNotes, OutsideTheValidatedRangeIsSaid) {
    // An H100 LoRA job: validated, no note.
    EXPECT_TRUE(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"))).empty());
    // The same on B200 (no measured Blackwell case), as QLoRA, and on a CPU server.
    EXPECT_TRUE(mentions(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"hardware.system=dgx-b200"})),
                         "no measured case on a"));
    EXPECT_TRUE(mentions(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"train.method=qlora"})),
                         "QLoRA"));
    // Unpacked data padded per batch: the planned peak is an upper bound set by seq_len (not by the batches'
    // longest samples); padded to seq_len (avg_seq_len = seq_len) there is nothing to say.
    const auto unpacked = accuracy_notes(
        load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"train.packing=false", "train.avg_seq_len=300"}));
    EXPECT_TRUE(mentions(unpacked, "upper bound"));
    EXPECT_TRUE(mentions(unpacked, "avg_seq_len 300 of seq_len 4096"));
    EXPECT_TRUE(mentions(unpacked, "data.max_sample_tokens"));
    // With the longest sample the peak is planned there, and the note says at what length.
    const auto longest = accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"),
                                                 {"train.packing=false", "train.avg_seq_len=300", "data.max_sample_tokens=1000"}));
    EXPECT_TRUE(mentions(longest, "padded to 1000 tokens, the longest sample (data.max_sample_tokens 1000)"));
    EXPECT_FALSE(mentions(longest, "upper bound"));
    EXPECT_TRUE(accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"),
                                        {"train.packing=false", "train.avg_seq_len=4096"})).empty());
    const auto cpu = accuracy_notes(load_job(plan_data("lora-8b-cpu-server.yaml")));
    EXPECT_TRUE(mentions(cpu, "CPU server"));
    EXPECT_TRUE(mentions(cpu, "validation/measured/cpu-vm"));
}

// Every range a note quotes is what `ftbound validate` finds today: a model change that moves a quoted case
// fails here until the figure in src/ops/accuracy_notes.cpp is updated.
TEST(OpsAccuracyNotes, QuotedRangesAreTheValidationResults) {
    for (const auto& [name, quoted] : quoted_ranges()) {
        const fs::path csv = fs::path(ftb_test::source_dir()) / quoted.csv;
        std::vector<double> errors_pct;
        for (const auto& c : read_cases(csv.string())) {
            if (c.quantity != quoted.quantity || c.id.rfind(quoted.id_prefix, 0) != 0 ||
                c.id.find(quoted.id_contains) == std::string::npos)
                continue;
            const CaseResult r = run_case(c, csv.parent_path().string());
            ASSERT_TRUE(r.predicted) << name << ": " << c.id << ": " << r.skipped;
            errors_pct.push_back(100 * r.error_fraction);
        }
        ASSERT_FALSE(errors_pct.empty()) << name;
        double abs_sum = 0;
        for (double e : errors_pct) abs_sum += std::abs(e);
        const auto [low, high] = std::minmax_element(errors_pct.begin(), errors_pct.end());
        const std::string fix = name + ": the quoted figure is stale; update quoted_ranges() in src/ops/accuracy_notes.cpp";
        EXPECT_EQ(quoted.cases, int(errors_pct.size())) << fix;
        EXPECT_EQ(quoted.low_pct, int(std::lround(*low))) << fix;
        EXPECT_EQ(quoted.high_pct, int(std::lround(*high))) << fix;
        EXPECT_EQ(quoted.mape_pct, int(std::lround(abs_sum / double(errors_pct.size())))) << fix;
    }
}

TEST(OpsAccuracyNotes, QLoraNoteQuotesItsRanges) {
    const auto notes = accuracy_notes(load_job(example("llama3.1-8b-lora-r760xa.yaml"), {"train.method=qlora"}));
    const QuotedRange* step = nullptr;
    for (const auto& [name, r] : quoted_ranges())
        if (name == "qlora_step_bnb") step = &r;
    ASSERT_NE(step, nullptr);
    EXPECT_TRUE(mentions(notes, std::to_string(step->low_pct) + "% to "));
}

TEST(OpsAccuracyNotes, PlanJsonCarriesThem) {
    const Json j = plan_json({plan_data("lora-8b-cpu-server.yaml")});
    ASSERT_TRUE(j["accuracy_notes"].is_array());
    EXPECT_FALSE(j["accuracy_notes"].empty());
}

}  // namespace
}  // namespace ftb
