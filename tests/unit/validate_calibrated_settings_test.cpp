// The registered calibrated settings (src/validate/calibrated_settings.hpp): which public cases fit each one, and
// that a calibration sets (or neutralises) exactly the values the profiles declare.
#include <gtest/gtest.h>

#include "spec/job_file.hpp"
#include "validate/calibrated_settings.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

const std::string kJobs = std::string(ftb_test::source_dir()) + "/validation/jobs/";

LoadedCase loaded(const std::string& job, const std::string& quantity, const std::string& quality) {
    LoadedCase lc;
    lc.c.id = "x-" + job, lc.c.quantity = quantity, lc.c.quality = quality, lc.c.measured = 1;
    lc.job = load_job(kJobs + job);
    return lc;
}

const CalibratedSetting& setting(const std::vector<CalibratedSetting>& all, const std::string& name) {
    for (const auto& s : all)
        if (s.name == name) return s;
    throw std::runtime_error("no setting " + name);
}

TEST(ValidateCalibratedSettings, EachSettingIsFittedOnItsOwnCases) {
    const auto all = calibrated_settings();
    const auto& factor = setting(all, "matmul_time_factor");
    const auto& block = setting(all, "host_overhead_per_block_us");
    const auto& unit = setting(all, "host_overhead_per_fsdp_unit_us");
    const LoadedCase lf = loaded("lf-a100-80-mpt7b-s2048-g8-mb6.yaml", "tokens_per_second_per_gpu", "high");
    EXPECT_EQ(factor.fit_key(lf), std::optional<std::string>("ampere"));
    EXPECT_FALSE(block.fit_key(lf));   // llm-foundry declares no host time
    EXPECT_FALSE(factor.fit_key(loaded("lf-a100-80-mpt7b-s2048-g8-mb6.yaml", "tokens_per_second_per_gpu", "low")));
    EXPECT_FALSE(factor.fit_key(loaded("lf-a100-80-mpt7b-s2048-g8-mb6.yaml", "allocated_peak", "high")));
    // LitGPT: single-GPU LoRA rows fit the per-block time, FSDP rows the per-unit time, QLoRA rows neither.
    const LoadedCase g1 = loaded("lg-a100-40-phi15-lora-mb1-g1.yaml", "iteration_seconds", "medium");
    const LoadedCase g2 = loaded("lg-a100-40-phi15-lora-mb1-g2.yaml", "iteration_seconds", "medium");
    const LoadedCase qlora = loaded("lg-a100-40-phi15-qlora-nf4-mb1-g1.yaml", "iteration_seconds", "medium");
    EXPECT_EQ(block.fit_key(g1), std::optional<std::string>(""));
    EXPECT_FALSE(unit.fit_key(g1));
    EXPECT_FALSE(block.fit_key(g2));
    EXPECT_EQ(unit.fit_key(g2), std::optional<std::string>(""));
    EXPECT_FALSE(block.fit_key(qlora));
    EXPECT_EQ(factor.fit_key(qlora), std::optional<std::string>("ampere"));
}

TEST(ValidateCalibratedSettings, ACalibrationSetsTheDeclaredValuesAndNeutralElsewhere) {
    const auto all = calibrated_settings();
    const Job lf = load_job(kJobs + "lf-a100-80-mpt7b-s2048-g8-mb6.yaml");
    const Calibration cal = {{"matmul_time_factor", {{"ampere", 1.5}}}, {"host_overhead_per_block_us", {{"", 1000}}}};
    const Job set = calibrated_job(lf, all, cal);
    // llm-foundry declares ampere and hopper: ampere takes the fit, hopper (no fitted key) runs at 1.
    for (const auto& [arch, f] : set.framework.matmul_time_factor) EXPECT_DOUBLE_EQ(f, arch == "ampere" ? 1.5 : 1.0) << arch;
    EXPECT_DOUBLE_EQ(set.framework.host_overhead_per_block_us, 0);   // not declared by llm-foundry: stays 0
    const Job lg = load_job(kJobs + "lg-a100-40-phi15-lora-mb1-g2.yaml");
    const Job lg_set = calibrated_job(lg, all, cal);
    EXPECT_DOUBLE_EQ(lg_set.framework.host_overhead_per_block_us, 1000);
    EXPECT_DOUBLE_EQ(lg_set.framework.host_overhead_per_fsdp_unit_us, 0);   // declared, not fitted: neutral
    const Job neutral = calibrated_job(lg, all, Calibration{});
    for (const auto& [arch, f] : neutral.framework.matmul_time_factor) EXPECT_DOUBLE_EQ(f, 1.0) << arch;
    EXPECT_DOUBLE_EQ(neutral.framework.host_overhead_per_block_us, 0);
}

}  // namespace
}  // namespace ftb
