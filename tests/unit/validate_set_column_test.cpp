// The optional `set` column of a cases file: job-file overrides for a setting the case's source states but the
// shared job file does not carry; validate plans with them and also reports the figure as transcribed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ftbound/error.hpp"
#include "plan_test_util.hpp"
#include "validate/validation.hpp"

namespace ftb {
namespace {

// A cases file next to a copy of the tiny job (plan_test_util.hpp), in a private folder.
std::string cases_with(const std::string& set_field) {
    const std::string dir = spec_test::scratch_dir() + "/set_column";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tiny.json") << plan_test::tiny_job_document().dump();
    std::ofstream(dir + "/cases.csv") << "id,job,quantity,measured,unit,source,note,quality,set\n"
                                      << "t-1,tiny.json,allocated_peak,1,GiB,test,the note,high," << set_field << "\n";
    return dir + "/cases.csv";
}

TEST(ValidateSetColumn, PlansWithTheSettingAndKeepsTheTranscribedFigure) {
    const std::string csv = cases_with("\"train.optimizer=sgd;train.seq_len=16\"");
    const auto cases = read_cases(csv);
    ASSERT_EQ(cases.size(), 1u);
    ASSERT_EQ(cases[0].set, (std::vector<std::string>{"train.optimizer=sgd", "train.seq_len=16"}));
    const CaseResult r = run_case(cases[0], std::filesystem::path(csv).parent_path().string());
    ASSERT_TRUE(r.predicted && r.predicted_as_transcribed) << r.skipped;
    // SGD keeps no state and its step no intermediate: the tiny job's peak (the AdamW step) drops.
    EXPECT_LT(*r.predicted, *r.predicted_as_transcribed);
    const auto cli = spec_test::run_ftbound({"validate", csv});
    ASSERT_EQ(cli.exit_code, 0) << spec_test::describe(cli);
    EXPECT_NE(cli.out.find("as transcribed"), std::string::npos) << cli.out;
}

TEST(ValidateSetColumn, NoSetMeansNoSecondFigure) {
    const std::string csv = cases_with("");
    const CaseResult r = run_case(read_cases(csv).at(0), std::filesystem::path(csv).parent_path().string());
    EXPECT_TRUE(r.predicted.has_value());
    EXPECT_FALSE(r.predicted_as_transcribed.has_value());
}

TEST(ValidateSetColumn, ASettingThatIsNotKeyEqualsValueIsAnError) {
    const std::string csv = cases_with("train.micro_batch");
    const auto cli = spec_test::run_ftbound({"validate", csv});
    EXPECT_EQ(cli.exit_code, 2) << spec_test::describe(cli);
    EXPECT_EQ(cli.err.rfind("error: ", 0), 0u) << cli.err;
    EXPECT_NE(cli.err.find("row 2 set"), std::string::npos) << cli.err;
    EXPECT_TRUE(cli.out.empty());
}

// iteration_seconds: one micro-batch per rank as "iter time" logs print it, the step over its accumulation steps.
TEST(ValidateSetColumn, IterationSecondsIsTheStepOverItsAccumulationSteps) {
    const std::string dir = spec_test::scratch_dir() + "/iteration_seconds";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tiny.json") << plan_test::tiny_job_document().dump();
    std::ofstream(dir + "/cases.csv") << "id,job,quantity,measured,unit,source,note,quality,set\n"
                                      << "t-step,tiny.json,step_seconds,1,s,test,,high,train.global_batch=4\n"
                                      << "t-iter,tiny.json,iteration_seconds,1,s,test,,high,train.global_batch=4\n";
    const auto cases = read_cases(dir + "/cases.csv");
    ASSERT_EQ(cases.size(), 2u);
    const CaseResult step = run_case(cases[0], dir), iteration = run_case(cases[1], dir);
    ASSERT_TRUE(step.predicted && iteration.predicted) << iteration.skipped;
    EXPECT_DOUBLE_EQ(*iteration.predicted, *step.predicted / 4);
}

// typical_step_allocated_peak: one logged step's peak of unpacked data, planned at the typical padded length.
TEST(ValidateSetColumn, TypicalStepAllocatedPeakIsPlannedAtTheTypicalPaddedLength) {
    const std::string dir = spec_test::scratch_dir() + "/typical_step";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tiny.json") << plan_test::tiny_job_document().dump();
    const std::string unpacked = "\"train.seq_len=2048;train.packing=false;train.avg_seq_len=64\"";
    std::ofstream(dir + "/cases.csv") << "id,job,quantity,measured,unit,source,note,quality,set\n"
                                      << "t-worst,tiny.json,allocated_peak,1,GiB,test,,high," << unpacked << "\n"
                                      << "t-typical,tiny.json,typical_step_allocated_peak,1,GiB,test,,high," << unpacked
                                      << "\n";
    const auto cases = read_cases(dir + "/cases.csv");
    ASSERT_EQ(cases.size(), 2u);
    const CaseResult worst = run_case(cases[0], dir), typical = run_case(cases[1], dir);
    ASSERT_TRUE(worst.predicted && typical.predicted) << typical.skipped;
    EXPECT_LT(*typical.predicted, *worst.predicted);
}

}  // namespace
}  // namespace ftb
