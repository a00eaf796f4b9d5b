// Fitting the matmul time factor (calibrate.hpp).
#include "validate/calibrate.hpp"

#include <algorithm>
#include <cmath>

#include "ftbound/error.hpp"
#include "spec/job_file.hpp"
#include "system/device_arch.hpp"
#include "validate/predict.hpp"

namespace ftb {
namespace {

struct FitCase {
    ValidationCase c;
    Job job;
    std::string arch;
};

bool opts_in(const Job& job, const std::string& arch) {
    for (const auto& [name, f] : job.framework.matmul_time_factor)
        if (name == arch) return true;
    return false;
}

// The fit cases with their loaded jobs (loaded once: the fit re-plans them many times).
std::vector<FitCase> load_fit_cases(const std::vector<ValidationCase>& cases, const std::string& csv_dir) {
    std::vector<FitCase> out;
    for (const auto& c : cases) {
        if (!is_fit_case(c)) continue;
        try {
            Job job = load_job(csv_dir + "/" + c.job);
            const std::string arch = to_string(gpu_arch(job.system.device));
            if (job.system.cpu_only || !opts_in(job, arch)) continue;
            out.push_back({c, std::move(job), arch});
        } catch (const InputError&) {
            continue;   // validate reports unreadable jobs; the fit skips them
        }
    }
    return out;
}

bool is_seconds_quantity(const std::string& q) { return q == "step_seconds" || q == "iteration_seconds"; }

// log(predicted / measured) of a case with the factor set to `factor` on its architecture.
double log_error(const FitCase& fc, double factor) {
    Job job = fc.job;
    job.framework.matmul_time_factor = {{fc.arch, factor}};
    std::string why;
    const auto p = predict_quantity(job, fc.c.quantity, fc.c.unit, why);
    return p && *p > 0 ? std::log(*p / fc.c.measured) : 0;
}

// Time cases whose quantity rises when the step gets faster; step and iteration seconds fall.
double signed_log_error(const FitCase& fc, double factor) {
    const double e = log_error(fc, factor);
    return is_seconds_quantity(fc.c.quantity) ? -e : e;
}

double median_signed_log_error(const std::vector<const FitCase*>& cases, double factor) {
    std::vector<double> e;
    for (const FitCase* fc : cases) e.push_back(signed_log_error(*fc, factor));
    return median(std::move(e));
}

// The factor at which half the cases are predicted too fast: the median throughput-signed log error crosses zero.
// The median, not the mean, so that cases missed for other reasons (host-bound steps, QLoRA) do not pull the
// factor. A larger factor makes every prediction slower, so the median falls as the factor rises: bisection on
// the log of the factor between 1/3 and 3.
double solve_factor(const std::vector<const FitCase*>& cases) {
    double lo = std::log(1.0 / 3), hi = std::log(3.0);
    for (int i = 0; i < 20; ++i) {
        const double mid = (lo + hi) / 2;
        (median_signed_log_error(cases, std::exp(mid)) > 0 ? lo : hi) = mid;
    }
    return std::exp((lo + hi) / 2);
}

FactorFit fit(const std::vector<FitCase>& all, const std::string& left_out) {
    FactorFit out;
    std::map<std::string, std::vector<const FitCase*>> by_arch;
    for (const auto& fc : all)
        if (left_out.empty() || case_source(fc.c.id) != left_out) by_arch[fc.arch].push_back(&fc);
    for (const auto& [arch, cases] : by_arch) {
        out.factor[arch] = solve_factor(cases);
        out.cases[arch] = int(cases.size());
    }
    return out;
}

double abs_error_with(const FitCase& fc, const FactorFit& f) {
    const auto it = f.factor.find(fc.arch);
    return std::fabs(std::expm1(log_error(fc, it == f.factor.end() ? 1.0 : it->second)));
}

}  // namespace

bool is_fit_case(const ValidationCase& c) {
    const bool time = c.quantity == "tokens_per_second_per_gpu" || c.quantity == "tokens_per_second" ||
                      is_seconds_quantity(c.quantity) || c.quantity == "mfu";
    return time && c.quality != "low";
}

FactorFit fit_matmul_factor(const std::vector<ValidationCase>& cases, const std::string& csv_dir,
                            const std::string& left_out) {
    return fit(load_fit_cases(cases, csv_dir), left_out);
}

std::vector<SourceFit> leave_one_source_out(const std::vector<ValidationCase>& cases, const std::string& csv_dir,
                                            FactorFit& in_sample) {
    const std::vector<FitCase> all = load_fit_cases(cases, csv_dir);
    in_sample = fit(all, "");
    std::vector<std::pair<std::string, std::string>> keys;   // (source, quantity) in order of appearance
    for (const auto& fc : all) {
        const std::pair<std::string, std::string> k{case_source(fc.c.id), fc.c.quantity};
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::map<std::string, FactorFit> without;
    std::vector<SourceFit> out;
    for (const auto& [source, quantity] : keys) {
        if (!without.count(source)) without[source] = fit(all, source);
        SourceFit s;
        s.source = source, s.quantity = quantity;
        const FactorFit none;
        for (const auto& fc : all) {
            if (case_source(fc.c.id) != source || fc.c.quantity != quantity) continue;
            ++s.cases;
            s.mape_in_sample += abs_error_with(fc, in_sample);
            s.mape_uncalibrated += abs_error_with(fc, none);
            s.mape_left_out += abs_error_with(fc, without[source]);
        }
        s.mape_in_sample /= s.cases, s.mape_uncalibrated /= s.cases, s.mape_left_out /= s.cases;
        s.fit_left_out = without[source];
        out.push_back(s);
    }
    return out;
}

}  // namespace ftb
