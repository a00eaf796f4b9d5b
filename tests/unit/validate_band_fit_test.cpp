// The memory band's fit (src/validate/band_fit.hpp) on cases worked by hand.
#include <gtest/gtest.h>

#include "validate/band_fit.hpp"

namespace ftb {
namespace {

// A case whose figure is all of one kind (100 bytes) and whose prediction missed by `miss` of it.
BandCase one_kind_case(const std::string& id, double state, double saved, double overhead, double miss) {
    return {id, case_source(id), BandParts{state, saved, overhead, state + saved + overhead}, miss};
}

TEST(BandFit, EvaluateCountsTheCasesInsideAndTheWidths) {
    const std::vector<BandCase> cases = {one_kind_case("a-1", 100, 0, 0, 0.03), one_kind_case("a-2", 0, 100, 0, 0.05),
                                         one_kind_case("b-1", 0, 0, 100, 0.20)};
    // 4% of state holds a-1 (3%); 10% of saved holds a-2 (5%); 50% of overhead is capped at 10%: b-1 (20%) is out.
    const BandFit f = evaluate_band(cases, {0.04, 0.10, 0.50});
    EXPECT_EQ(f.cases, 3);
    EXPECT_EQ(f.held, 2);
    EXPECT_NEAR(f.mean_half_width, (0.04 + 0.10 + 0.10) / 3, 1e-12);
    EXPECT_NEAR(f.median_half_width, 0.10, 1e-12);
}

TEST(BandFit, FitsTheNarrowestFractionsThatHoldTheTarget) {
    const std::vector<BandCase> cases = {one_kind_case("a-1", 100, 0, 0, 0.03), one_kind_case("a-2", 0, 100, 0, 0.05),
                                         one_kind_case("a-3", 0, 0, 100, 0.05)};
    // Every case held: state 3% (the grid's 0.5% steps), saved 5% (1% steps), overhead 5% (5% steps).
    const BandFit all = fit_band(cases, 1.0);
    EXPECT_EQ(all.held, 3);
    EXPECT_NEAR(all.fractions.state, 0.03, 1e-12);
    EXPECT_NEAR(all.fractions.saved, 0.05, 1e-12);
    EXPECT_NEAR(all.fractions.overhead, 0.05, 1e-12);
    // Two of three are enough: the narrowest way holds the state case at 3% and one of the two 5% cases,
    // leaving the third kind at zero.
    const BandFit two = fit_band(cases, 0.6);
    EXPECT_EQ(two.held, 2);
    EXPECT_NEAR(two.mean_half_width, (0.03 + 0.05) / 3, 1e-12);
}

TEST(BandFit, UnreachableTargetHoldsTheMostCases) {
    // 30% beyond the 10% cap can never be held: the fit holds the other case and reports 1 of 2.
    const std::vector<BandCase> cases = {one_kind_case("a-1", 0, 100, 0, 0.30), one_kind_case("a-2", 0, 100, 0, 0.02)};
    const BandFit f = fit_band(cases, 0.9);
    EXPECT_EQ(f.held, 1);
    EXPECT_NEAR(f.fractions.saved, 0.02, 1e-12);
}

TEST(BandFit, LeavingASourceOutFitsOnTheOthers) {
    const std::vector<BandCase> cases = {one_kind_case("a-1", 0, 100, 0, 0.02), one_kind_case("b-1", 0, 100, 0, 0.06)};
    const auto checks = band_leave_one_source_out(cases, 1.0);
    ASSERT_EQ(checks.size(), 2u);
    EXPECT_EQ(checks[0].source, "a");
    EXPECT_NEAR(checks[0].fitted_without.fractions.saved, 0.06, 1e-12);   // fitted on b alone
    EXPECT_EQ(checks[0].held_out.held, 1);                                // 6% holds a's 2%
    EXPECT_EQ(checks[1].source, "b");
    EXPECT_NEAR(checks[1].fitted_without.fractions.saved, 0.02, 1e-12);   // fitted on a alone
    EXPECT_EQ(checks[1].held_out.held, 0);                                // 2% misses b's 6%
}

}  // namespace
}  // namespace ftb
