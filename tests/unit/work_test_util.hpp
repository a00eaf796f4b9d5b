// The tiny job of plan_test_util.hpp with what the work builder reads beside it: its training setup, its device's
// rates and a neutral resource scale, for tests of one unit of the step-time model.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "memory/training_setup.hpp"
#include "plan_test_util.hpp"
#include "timing/rates.hpp"
#include "timing/work.hpp"

namespace plan_test {

struct BuiltWork {
    ftb::Job job;
    ftb::TrainingSetup set;
    ftb::DeviceRates rates;
    ftb::ResourceScale scale;
    ftb::WorkContext work() const { return ftb::make_work_context(job, set, rates, scale); }
};

inline BuiltWork build_work(const std::vector<std::pair<std::string, std::string>>& sets = {}, int gpus = 1) {
    BuiltWork b{tiny_job(sets, gpus), {}, {}, {}};
    b.set = ftb::derive_setup(b.job);
    b.rates = ftb::device_rates(b.job.system.device);
    return b;
}

}  // namespace plan_test
