// Accuracy pins and per-source summaries: hand-made results and pins files, expected outcomes worked out by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ftbound/error.hpp"
#include "validate/pins.hpp"
#include "validate/validation.hpp"

namespace ftb {
namespace {

CaseResult result(const std::string& id, const std::string& quantity, double error) {
    CaseResult r;
    r.c.id = id, r.c.quantity = quantity, r.c.quality = "high", r.c.measured = 100;
    r.predicted = 100 * (1 + error);
    r.error_fraction = error;
    return r;
}

std::string write_temp(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("ftbound_pins_test_" + name);
    std::ofstream(path) << text;
    return path.string();
}

TEST(ValidatePins, SourceIsTheCaseIdUpToTheFirstDash) {
    EXPECT_EQ(case_source("lf-h100-mpt70b-tps"), "lf");
    EXPECT_EQ(case_source("llama3-h100-405b"), "llama3");
    EXPECT_EQ(case_source("nodash"), "nodash");
}

TEST(ValidatePins, BySourceSummarisesEachSourceAlone) {
    const std::vector<CaseResult> rs = {result("a-1", "step_seconds", 0.10), result("a-2", "step_seconds", -0.30),
                                        result("b-1", "step_seconds", 0.40)};
    const auto s = summarise_by_source(rs);
    ASSERT_EQ(s.size(), 4u);   // a and b, each high+medium and all
    EXPECT_EQ(s[0].source, "a");
    EXPECT_DOUBLE_EQ(s[0].mape, 0.20);
    EXPECT_EQ(s[0].beyond_30, 0);   // exactly 30% is not beyond
    EXPECT_EQ(s[2].source, "b");
    EXPECT_DOUBLE_EQ(s[2].mape, 0.40);
    EXPECT_EQ(s[2].beyond_30, 1);
    EXPECT_EQ(summarise(rs)[0].source, "all");
}

TEST(ValidatePins, APinFailsWhenMapeRisesOrACaseStopsBeingPredicted) {
    const std::vector<CaseResult> rs = {result("a-1", "mfu", 0.10), result("a-2", "mfu", -0.20)};
    std::vector<QuantitySummary> sums = summarise(rs);
    const auto by = summarise_by_source(rs);
    sums.insert(sums.end(), by.begin(), by.end());
    const std::string pins_csv = write_temp("check.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,reason\n"
        "c.csv,all,mfu,all,2,15.0,0,at the pin (15.0%)\n"
        "c.csv,a,mfu,all,2,14.9,0,\"below the figure, a comma\"\n"
        "c.csv,a,mfu,high+medium,3,20,0,one case fewer than pinned\n"
        "other.csv,all,mfu,all,1,1,0,another cases file\n");
    const auto pins = read_pins(pins_csv);
    ASSERT_EQ(pins.size(), 4u);
    EXPECT_EQ(pins[1].reason, "below the figure, a comma");
    const auto checks = check_pins(pins, "c.csv", sums);
    ASSERT_EQ(checks.size(), 3u);
    EXPECT_TRUE(checks[0].ok) << checks[0].message;
    EXPECT_FALSE(checks[1].ok);
    EXPECT_NE(checks[1].message.find("MAPE 15.0% above its pin 14.9%"), std::string::npos) << checks[1].message;
    EXPECT_FALSE(checks[2].ok);
    EXPECT_NE(checks[2].message.find("2 cases predicted, pinned 3"), std::string::npos) << checks[2].message;
}

TEST(ValidatePins, UpdatingKeepsOtherFilesAndAsksAReasonOnlyForRisingPins) {
    const std::vector<CaseResult> rs = {result("a-1", "mfu", 0.10)};
    const auto sums = summarise(rs);
    std::vector<Pin> pins(2);
    pins[0].cases = "c.csv", pins[0].source = "all", pins[0].quantity = "mfu", pins[0].qualities = "all";
    pins[0].count = 1, pins[0].max_mape_percent = 5, pins[0].reason = "old";
    pins[1].cases = "other.csv", pins[1].source = "all", pins[1].quantity = "mfu", pins[1].qualities = "all";
    std::vector<std::string> rising;
    const auto updated = updated_pins(pins, "c.csv", sums, "why it rose", rising);
    ASSERT_EQ(updated.size(), 3u);   // other.csv kept; c.csv all/all and all/high+medium
    EXPECT_EQ(updated[0].cases, "other.csv");
    ASSERT_EQ(rising.size(), 1u);
    EXPECT_EQ(updated[1].qualities, "high+medium");   // summaries come high+medium first, then all
    EXPECT_EQ(updated[1].reason, "first pin");
    EXPECT_EQ(updated[2].qualities, "all");
    EXPECT_DOUBLE_EQ(updated[2].max_mape_percent, 10.0);
    EXPECT_EQ(updated[2].reason, "why it rose");
}

TEST(ValidatePins, BadPinsFilesNameFileRowAndField) {
    const std::string bad = write_temp("bad.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30\nc.csv,all,mfu,all,2,x,0\n");
    try {
        read_pins(bad);
        FAIL() << "accepted a non-number";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "row 2 max_mape_percent");
    }
    const std::string missing = write_temp("missing.csv", "cases,source,quantity\n");
    EXPECT_THROW(read_pins(missing), InputError);
    const std::string qualities = write_temp("qualities.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30\nc.csv,all,mfu,best,2,1,0\n");
    EXPECT_THROW(read_pins(qualities), InputError);
}

}  // namespace
}  // namespace ftb
