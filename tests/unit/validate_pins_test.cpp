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

CaseResult banded(const std::string& id, double predicted, double low, double high) {
    CaseResult r = result(id, "allocated_peak", (predicted - 100) / 100);
    r.band_low = low, r.band_high = high;
    return r;
}

TEST(ValidatePins, BandHonestyCountsMeasuredValuesInsideThePlansBand) {
    // Measured 100 each. Bands: [95, 105] holds it; [101, 111] misses it (prediction 106 too high); [100, 120] holds it
    // at its edge; an mfu case has no band and is not counted. Half-widths as fractions of the prediction: 5/100,
    // 5/106, 10/110 -> sorted 0.0472, 0.05, 0.0909 -> median 0.05.
    const std::vector<CaseResult> rs = {banded("a-1", 100, 95, 105), banded("a-2", 106, 101, 111),
                                        banded("a-3", 110, 100, 120), result("a-4", "mfu", 0.1)};
    const auto s = summarise(rs);
    ASSERT_EQ(s.size(), 4u);   // allocated_peak and mfu, each high+medium and all
    EXPECT_EQ(s[0].quantity, "allocated_peak");
    EXPECT_EQ(s[0].banded, 3);
    EXPECT_EQ(s[0].in_band, 2);
    EXPECT_DOUBLE_EQ(s[0].band_median_half_width, 0.05);
    EXPECT_EQ(s[2].quantity, "mfu");
    EXPECT_EQ(s[2].banded, 0);
    EXPECT_FALSE(rs[3].in_band());
}

TEST(ValidatePins, ACoveragePinFailsWhenFewerMeasuredValuesLieInsideTheBand) {
    const std::vector<CaseResult> rs = {banded("a-1", 100, 95, 105), banded("a-2", 106, 101, 111)};
    const auto sums = summarise(rs);
    const std::string pins_csv = write_temp("coverage.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,min_in_band,reason\n"
        "c.csv,all,allocated_peak,all,2,5,0,1,one inside\n"
        "c.csv,all,allocated_peak,high+medium,2,5,0,2,both inside\n");
    const auto pins = read_pins(pins_csv);
    ASSERT_EQ(pins.size(), 2u);
    EXPECT_EQ(pins[0].min_in_band, 1);
    const auto checks = check_pins(pins, "c.csv", sums);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_TRUE(checks[1].ok == false && checks[0].ok == true) << checks[0].message << " / " << checks[1].message;
    EXPECT_NE(checks[1].message.find("1 of 2 measured inside the plan's band, pinned at least 2"), std::string::npos)
        << checks[1].message;
    // Updating asks a reason when the coverage drops, and writes the count back.
    std::vector<std::string> rising;
    const auto updated = updated_pins(pins, "c.csv", sums, "why", rising);
    ASSERT_EQ(rising.size(), 1u);
    EXPECT_NE(rising[0].find("in band 2 -> 1"), std::string::npos) << rising[0];
    const std::string out = write_temp("coverage_out.csv", "");
    write_pins(out, updated);
    const auto again = read_pins(out);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].min_in_band, 1);
    EXPECT_EQ(again[1].min_in_band, 1);
}

TEST(ValidatePins, PinsWithoutCoverageLeaveItUnpinned) {
    const std::string pins_csv = write_temp("no_coverage.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,reason\n"
        "c.csv,all,allocated_peak,all,1,50,0,old file\n");
    const auto pins = read_pins(pins_csv);
    ASSERT_EQ(pins.size(), 1u);
    EXPECT_EQ(pins[0].min_in_band, -1);
    const auto checks = check_pins(pins, "c.csv", summarise({banded("a-1", 130, 120, 140)}));
    EXPECT_TRUE(checks.at(0).ok) << checks.at(0).message;
}

// read_pins rejects `path` with an InputError naming `field`.
void expect_rejected_field(const std::string& path, const std::string& field) {
    try {
        read_pins(path);
        ADD_FAILURE() << path << ": accepted, expected an error naming " << field;
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), field);
    }
}

TEST(ValidatePins, BadPinsFilesNameFileRowAndField) {
    const std::string bad = write_temp("bad.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30\nc.csv,all,mfu,all,2,x,0\n");
    expect_rejected_field(bad, "row 2 max_mape_percent");
    const std::string missing = write_temp("missing.csv", "cases,source,quantity\n");
    EXPECT_THROW(read_pins(missing), InputError);
    const std::string coverage = write_temp("bad_coverage.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30,min_in_band\n"
        "c.csv,all,mfu,all,2,1,0,1.5\n");
    expect_rejected_field(coverage, "row 2 min_in_band");
    const std::string qualities = write_temp("qualities.csv",
        "cases,source,quantity,qualities,cases_predicted,max_mape_percent,max_beyond_30\nc.csv,all,mfu,best,2,1,0\n");
    EXPECT_THROW(read_pins(qualities), InputError);
    const std::string binary = write_temp("binary.csv", std::string("cases,\0\x01\xff\n", 10));
    try {
        read_pins(binary);
        ADD_FAILURE() << "a binary pins file was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("not a text file"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace ftb
