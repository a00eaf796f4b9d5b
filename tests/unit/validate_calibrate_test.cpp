// The matmul-factor fit (src/validate/calibrate.hpp): on cases whose measured figures are the model's own
// predictions at a known factor, the fit must find that factor again, with every source in and with each left out.
#include <gtest/gtest.h>

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "spec/job_file.hpp"
#include "validate/calibrate.hpp"
#include "validate/predict.hpp"

namespace ftb {
namespace {

const std::string kDir = std::string(FTBOUND_SOURCE_DIR) + "/validation";

// A case of `source` on an llm-foundry A100 job, "measured" as the prediction with the factor at `factor`.
ValidationCase synthetic(const std::string& source, const std::string& job, double factor) {
    ValidationCase c;
    c.id = source + "-" + job;
    c.job = "jobs/" + job;
    c.quantity = "tokens_per_second_per_gpu";
    c.unit = "tokens/s/GPU";
    c.quality = "high";
    Job j = load_job(kDir + "/" + c.job);
    j.framework.matmul_time_factor = {{"ampere", factor}};
    std::string why;
    c.measured = *predict_quantity(j, c.quantity, c.unit, why);
    return c;
}

TEST(ValidateCalibrate, FindsTheFactorTheFiguresWereMadeWithAlsoWithASourceLeftOut) {
    const std::vector<ValidationCase> cases = {
        synthetic("x", "lf-a100-80-mpt7b-s2048-g8-mb6.yaml", 1.3),
        synthetic("x", "lf-a100-80-mpt1b-s2048-g8-mb14.yaml", 1.3),
        synthetic("y", "lf-a100-80-mpt3b-s2048-g8-mb10.yaml", 1.3)};
    const FactorFit all = fit_matmul_factor(cases, kDir, "");
    ASSERT_EQ(all.factor.count("ampere"), 1u);
    EXPECT_NEAR(all.factor.at("ampere"), 1.3, 0.003);
    EXPECT_EQ(all.cases.at("ampere"), 3);
    FactorFit in_sample;
    const auto rows = leave_one_source_out(cases, kDir, in_sample);
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
        SCOPED_TRACE(r.source);
        EXPECT_LT(r.mape_in_sample, 0.003);
        EXPECT_LT(r.mape_left_out, 0.003);          // the other source holds the same factor
        EXPECT_GT(r.mape_uncalibrated, 0.01);       // factor 1 predicts faster than the figures
        EXPECT_NEAR(r.fit_left_out.factor.at("ampere"), 1.3, 0.003);
    }
}

TEST(ValidateCalibrate, OnlyTimeCasesOfGoodQualityAreFitted) {
    ValidationCase c;
    c.quantity = "step_seconds", c.quality = "medium";
    EXPECT_TRUE(is_fit_case(c));
    c.quality = "low";
    EXPECT_FALSE(is_fit_case(c));
    c.quantity = "allocated_peak", c.quality = "high";
    EXPECT_FALSE(is_fit_case(c));
}

}  // namespace
}  // namespace ftb
