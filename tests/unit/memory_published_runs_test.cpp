// Every configuration a published benchmark ran must fit in its GPUs' memory: the llm-foundry tables
// (validation/cases.csv, lf-* rows) list micro-batches that trained, so a plan that says "does not fit" for
// one of them over-counts memory. This pins the memory model from above on 216 real runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "ftbound/memory.hpp"
#include "spec/job_file.hpp"
#include "validate/validation.hpp"

namespace ftb {
namespace {

TEST(MemoryPublishedRuns, EveryLlmFoundryBenchmarkConfigurationFits) {
    const std::filesystem::path dir = std::filesystem::path(FTBOUND_SOURCE_DIR) / "validation";
    const auto cases = read_cases((dir / "cases.csv").string());
    std::set<std::string> jobs;
    for (const auto& c : cases)
        if (c.id.rfind("lf-", 0) == 0) jobs.insert(c.job);
    ASSERT_GE(jobs.size(), 200u);
    for (const auto& j : jobs) {
        const Job job = load_job((dir / j).string());
        const MemoryResult m = plan_memory(job);
        EXPECT_TRUE(m.fits) << j << ": " << m.device_used_bytes / 1073741824.0 << " GiB of "
                            << m.capacity_bytes / 1073741824.0;
        // The published micro-batch is at most the largest that fits.
        EXPECT_GE(max_micro_batch(job), job.spec.train.micro_batch) << j;
    }
}

}  // namespace
}  // namespace ftb
