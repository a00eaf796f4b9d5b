// Leave one source out (src/validate/leave_out.hpp) on a tiny synthetic pool whose predictions are closed-form, so
// that every refitted value and left-out error is computed by hand:
//   "scale" (a factor, neutral 1) divides a tokens/s prediction of 100: a case measured m needs scale 100/m;
//   "a_only" (a time, neutral 0) adds to a step time of 1 s, and only source a has a step case.
#include <gtest/gtest.h>

#include <cmath>

#include "spec_test_util.hpp"
#include "validate/leave_out.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

LoadedCase synthetic(const std::string& id, const std::string& quantity, double measured) {
    LoadedCase lc;
    lc.c.id = id, lc.c.quantity = quantity, lc.c.measured = measured, lc.c.quality = "high";
    lc.cases_file = "cases.csv";
    lc.source = case_source(id);
    lc.job = Job{};
    return lc;
}

double value(const Calibration& cal, const std::string& name, double neutral) {
    const auto it = cal.find(name);
    return it == cal.end() || it->second.empty() ? neutral : it->second.begin()->second;
}

CaseResult predict(const LoadedCase& lc, const Calibration& cal) {
    CaseResult r;
    r.c = lc.c;
    if (lc.c.quantity == "tokens_per_second") r.predicted = 100 / value(cal, "scale", 1);
    if (lc.c.quantity == "step_seconds") r.predicted = 1 + value(cal, "a_only", 0);
    if (lc.c.quantity == "allocated_peak") r.predicted = 10.0;
    r.error_fraction = (*r.predicted - lc.c.measured) / lc.c.measured;
    return r;
}

std::vector<CalibratedSetting> settings() {
    CalibratedSetting scale;
    scale.name = "scale", scale.neutral = 1, scale.low = 1.0 / 3, scale.high = 3, scale.log_scale = true;
    scale.fit_key = [](const LoadedCase& lc) -> std::optional<std::string> {
        return lc.c.quantity == "tokens_per_second" ? std::optional<std::string>("gpu") : std::nullopt;
    };
    scale.apply = [](Job&, const FitValues&) {};
    CalibratedSetting a_only;
    a_only.name = "a_only", a_only.neutral = 0, a_only.low = 0, a_only.high = 10;
    a_only.fit_key = [](const LoadedCase& lc) -> std::optional<std::string> {
        return lc.c.quantity == "step_seconds" ? std::optional<std::string>("") : std::nullopt;
    };
    a_only.apply = [](Job&, const FitValues&) {};
    return {scale, a_only};
}

// Needed scales: a 100/80 = 1.25, b 100/50 = 2, c 100/62.5 = 1.6; a's step needs a_only = 0.5.
std::vector<LoadedCase> pool() {
    return {synthetic("a-1", "tokens_per_second", 80), synthetic("a-2", "step_seconds", 1.5),
            synthetic("b-1", "tokens_per_second", 50), synthetic("c-1", "tokens_per_second", 62.5),
            synthetic("d-1", "allocated_peak", 8)};
}

const SourceRefit& refit_of(const LeaveOutResult& r, const std::string& source) {
    for (const auto& refit : r.refits)
        if (refit.source == source) return refit;
    throw std::runtime_error("no refit for " + source);
}

TEST(ValidateLeaveOut, RefitsEverySettingWithoutEachSource) {
    const auto cases = pool();
    const LeaveOutResult r = leave_one_source_out(cases, settings(), predict, 0.9);
    // In-sample: the median of 1.25, 1.6, 2 is 1.6; a_only 0.5. Both settle in one pass, the second moves nothing.
    EXPECT_NEAR(r.in_sample.values.at("scale").at("gpu"), 1.6, 1e-5);
    EXPECT_NEAR(r.in_sample.values.at("a_only").at(""), 0.5, 1e-5);
    EXPECT_EQ(r.in_sample.passes, 2);
    EXPECT_EQ(r.in_sample.cases.at("scale").at("gpu"), 3);
    // Two cases left: the median of their log errors is zero at the geometric mean of the two needed scales.
    EXPECT_NEAR(refit_of(r, "a").fit.values.at("scale").at("gpu"), std::sqrt(1.6 * 2), 1e-5);
    EXPECT_NEAR(refit_of(r, "b").fit.values.at("scale").at("gpu"), std::sqrt(1.25 * 1.6), 1e-5);
    EXPECT_NEAR(refit_of(r, "c").fit.values.at("scale").at("gpu"), std::sqrt(1.25 * 2), 1e-5);
    // Only a fits a_only: without a it falls back to neutral, and says so.
    EXPECT_TRUE(refit_of(r, "a").fit.values.at("a_only").empty());
    EXPECT_EQ(refit_of(r, "a").fell_back, std::vector<std::string>{"a_only"});
    EXPECT_TRUE(refit_of(r, "b").fell_back.empty());
    // d fits nothing: its refit is the in-sample fit.
    EXPECT_NEAR(refit_of(r, "d").fit.values.at("scale").at("gpu"), 1.6, 1e-5);
}

TEST(ValidateLeaveOut, PredictsEachSourceWithItsRefit) {
    const auto cases = pool();
    const LeaveOutResult r = leave_one_source_out(cases, settings(), predict, 0.9);
    // a-1: 100 / sqrt(3.2) = 55.902 against 80: -30.12%; in-sample 100 / 1.6 = 62.5: -21.875%; uncalibrated +25%.
    EXPECT_NEAR(r.left_out_results[0].error_fraction, 100 / std::sqrt(3.2) / 80 - 1, 1e-5);
    EXPECT_NEAR(r.in_sample_results[0].error_fraction, -0.21875, 1e-5);
    EXPECT_NEAR(r.uncalibrated_results[0].error_fraction, 0.25, 1e-9);
    // a-2: a_only neutral when a is left out: 1 s against 1.5 s.
    EXPECT_NEAR(r.left_out_results[1].error_fraction, -1.0 / 3, 1e-9);
    EXPECT_NEAR(r.in_sample_results[1].error_fraction, 0, 1e-5);
    // b-1: 100 / sqrt(2) = 70.71 against 50: +41.42%.
    EXPECT_NEAR(r.left_out_results[2].error_fraction, 100 / std::sqrt(2.0) / 50 - 1, 1e-5);

    const auto rows = summarise_leave_out(r, cases);
    const LeaveOutSummary* a_tokens = nullptr;
    for (const auto& row : rows)
        if (row.left_out.source == "a" && row.left_out.quantity == "tokens_per_second" && row.left_out.qualities == "all")
            a_tokens = &row;
    ASSERT_NE(a_tokens, nullptr);
    EXPECT_EQ(a_tokens->left_out.cases, 1);
    EXPECT_NEAR(a_tokens->left_out.mape, 1 - 100 / std::sqrt(3.2) / 80, 1e-5);
    EXPECT_NEAR(a_tokens->in_sample.mape, 0.21875, 1e-5);
    EXPECT_NEAR(a_tokens->uncalibrated.mape, 0.25, 1e-9);
    EXPECT_EQ(a_tokens->left_out.worst_id, "a-1");
}

TEST(ValidateLeaveOut, ReleasesOfOnePublicationAreOneSource) {
    const auto group = leave_out_sources({"mbridge2509", "lf", "mbridge2511", "nemo2412", "llama3", "mbridge2509"});
    EXPECT_EQ(group.at("mbridge2509"), "mbridge");
    EXPECT_EQ(group.at("mbridge2511"), "mbridge");
    EXPECT_EQ(group.at("nemo2412"), "nemo2412");   // one release only: its own name
    EXPECT_EQ(group.at("llama3"), "llama3");
    EXPECT_EQ(group.at("lf"), "lf");
}

// The CLI's pins: they are written and checked for the whole pool, a rise exits 3, a cases file missing from the
// pool is an input error.
TEST(ValidateLeaveOut, CliPinsTheLeftOutFiguresOfThePool) {
    const std::string job = std::string(ftb_test::source_dir()) + "/examples/llama3.1-8b-lora-r760xa.yaml";
    spec_test::write_scratch("leave_out_cli/job.yaml", spec_test::slurp(job));
    spec_test::write_scratch("leave_out_cli/cases.csv", "id,job,quantity,measured,unit,source,note\n"
                                                        "x-1,job.yaml,tokens_per_second_per_gpu,5000,tokens/s,test,\n");
    const std::string dir = spec_test::scratch_dir() + "/leave_out_cli";
    const std::string cases = dir + "/cases.csv", pins = dir + "/pins_left_out.csv";
    spec_test::CliResult r = spec_test::run_ftbound({"validate", "--leave-out", cases, "--pins", pins, "--update-pins"});
    ASSERT_EQ(r.exit_code, 0) << spec_test::describe(r);
    r = spec_test::run_ftbound({"validate", "--leave-out", cases, "--pins", pins});
    EXPECT_EQ(r.exit_code, 0) << spec_test::describe(r);
    // A pin below the figure: exit 3, named on stderr.
    spec_test::write_scratch("leave_out_cli/low.csv",
                             "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,reason\n"
                             "cases.csv,x,tokens_per_second_per_gpu,all,1,0.0,0,test\n");
    r = spec_test::run_ftbound({"validate", "--leave-out", cases, "--pins", dir + "/low.csv"});
    EXPECT_EQ(r.exit_code, 3) << spec_test::describe(r);
    EXPECT_NE(r.err.find("cases.csv x tokens_per_second_per_gpu (all)"), std::string::npos) << r.err;
    // Pins of a cases file that is not in the pool: the figures would not be comparable.
    spec_test::write_scratch("leave_out_cli/other.csv",
                             "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,reason\n"
                             "other/cases.csv,x,tokens_per_second_per_gpu,all,1,50.0,0,test\n");
    r = spec_test::run_ftbound({"validate", "--leave-out", cases, "--pins", dir + "/other.csv"});
    EXPECT_EQ(r.exit_code, 2) << spec_test::describe(r);
    EXPECT_NE(r.err.find("is pinned but not given"), std::string::npos) << r.err;
    r = spec_test::run_ftbound({"validate", "--leave-out", cases, "--quantity", "mfu"});
    EXPECT_EQ(r.exit_code, 2) << spec_test::describe(r);
}

}  // namespace
}  // namespace ftb
