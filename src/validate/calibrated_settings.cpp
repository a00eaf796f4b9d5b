// The calibrated settings as registered fits (calibrated_settings.hpp).
#include "validate/calibrated_settings.hpp"

#include <filesystem>

#include "ftbound/error.hpp"
#include "spec/job_file.hpp"
#include "system/device_arch.hpp"

namespace fs = std::filesystem;

namespace ftb {
namespace {

bool is_time_quantity(const std::string& q) {
    return q == "tokens_per_second_per_gpu" || q == "tokens_per_second" || q == "step_seconds" ||
           q == "iteration_seconds" || q == "mfu";
}

// A time case a setting may be fitted on: a GPU job, quality high or medium (as the pins count).
bool is_fit_time_case(const LoadedCase& lc) {
    return lc.job && !lc.job->system.cpu_only && is_time_quantity(lc.c.quantity) && lc.c.quality != "low";
}

std::string arch_of(const Job& job) { return to_string(gpu_arch(job.system.device)); }

bool declares_factor(const Job& job, const std::string& arch) {
    for (const auto& [name, f] : job.framework.matmul_time_factor)
        if (name == arch) return true;
    return false;
}

double value_or(const FitValues& values, const std::string& key, double neutral) {
    const auto it = values.find(key);
    return it == values.end() ? neutral : it->second;
}

int64_t gpus(const Job& job) {
    const ParallelSpec& p = job.spec.parallel;
    return p.tp * p.pp * p.cp * p.dp;
}

// The bisection's range for a host time per block or unit: 0 to 20 ms (the fitted values are a few ms).
constexpr double kMaxHostOverheadUs = 20000;

CalibratedSetting matmul_time_factor() {
    CalibratedSetting s;
    s.name = "matmul_time_factor";
    s.lives_in = "data/frameworks/{llm-foundry,torchtune,hf,litgpt,torchtitan}.yaml time.matmul_time_factor";
    s.neutral = 1, s.low = 1.0 / 3, s.high = 3, s.log_scale = true;
    s.fit_key = [](const LoadedCase& lc) -> std::optional<std::string> {
        if (!is_fit_time_case(lc) || !declares_factor(*lc.job, arch_of(*lc.job))) return std::nullopt;
        return arch_of(*lc.job);
    };
    // Every architecture the profile declares takes the shared fit (1 where no case fitted it).
    s.apply = [](Job& job, const FitValues& values) {
        for (auto& [arch, f] : job.framework.matmul_time_factor) f = value_or(values, arch, 1);
    };
    return s;
}

CalibratedSetting host_overhead_per_block() {
    CalibratedSetting s;
    s.name = "host_overhead_per_block_us";
    s.lives_in = "data/frameworks/litgpt.yaml time.host_overhead_per_block_us";
    s.neutral = 0, s.low = 0, s.high = kMaxHostOverheadUs;
    s.fit_key = [](const LoadedCase& lc) -> std::optional<std::string> {
        if (!is_fit_time_case(lc) || lc.job->framework.host_overhead_per_block_us <= 0) return std::nullopt;
        if (gpus(*lc.job) != 1 || lc.job->spec.train.method != Method::lora) return std::nullopt;
        return std::string();
    };
    s.apply = [](Job& job, const FitValues& values) {
        if (job.framework.host_overhead_per_block_us > 0) job.framework.host_overhead_per_block_us = value_or(values, "", 0);
    };
    return s;
}

CalibratedSetting host_overhead_per_fsdp_unit() {
    CalibratedSetting s;
    s.name = "host_overhead_per_fsdp_unit_us";
    s.lives_in = "data/frameworks/litgpt.yaml time.host_overhead_per_fsdp_unit_us";
    s.neutral = 0, s.low = 0, s.high = kMaxHostOverheadUs;
    // The per-unit time applies where FSDP shards over more than one rank (host_issue.cpp add_host_issue).
    s.fit_key = [](const LoadedCase& lc) -> std::optional<std::string> {
        if (!is_fit_time_case(lc) || lc.job->framework.host_overhead_per_fsdp_unit_us <= 0) return std::nullopt;
        if (lc.job->spec.parallel.zero < 3 || lc.job->spec.parallel.dp <= 1) return std::nullopt;
        return std::string();
    };
    s.apply = [](Job& job, const FitValues& values) {
        if (job.framework.host_overhead_per_fsdp_unit_us > 0)
            job.framework.host_overhead_per_fsdp_unit_us = value_or(values, "", 0);
    };
    return s;
}

}  // namespace

std::vector<CalibratedSetting> calibrated_settings() {
    return {matmul_time_factor(), host_overhead_per_block(), host_overhead_per_fsdp_unit()};
}

Job calibrated_job(const Job& job, const std::vector<CalibratedSetting>& settings, const Calibration& cal) {
    Job out = job;
    static const FitValues kNone;
    for (const auto& s : settings) {
        const auto it = cal.find(s.name);
        s.apply(out, it == cal.end() ? kNone : it->second);
    }
    return out;
}

std::vector<LoadedCase> load_cases(const std::vector<std::string>& cases_files) {
    std::vector<LoadedCase> out;
    std::vector<std::string> prefixes;
    for (const auto& file : cases_files) {
        const fs::path path(file);
        const std::string dir = path.has_parent_path() ? path.parent_path().string() : std::string(".");
        for (const auto& c : read_cases(file)) {
            LoadedCase lc;
            lc.c = c, lc.cases_file = file;
            try {
                lc.job = load_job((fs::path(dir) / c.job).string(), c.set);
            } catch (const InputError& e) {
                lc.error = std::string("error: ") + e.what();   // reported as not predicted, as validate does
            }
            prefixes.push_back(case_source(c.id));
            out.push_back(std::move(lc));
        }
    }
    const auto group = leave_out_sources(prefixes);
    for (auto& lc : out) lc.source = group.at(case_source(lc.c.id));
    return out;
}

CasePredictor case_predictor(const std::vector<CalibratedSetting>& settings) {
    return [settings](const LoadedCase& lc, const Calibration& cal) {
        if (!lc.job) {
            CaseResult r;
            r.c = lc.c, r.skipped = lc.error;
            return r;
        }
        return run_case_on(lc.c, calibrated_job(*lc.job, settings, cal));
    };
}

}  // namespace ftb
