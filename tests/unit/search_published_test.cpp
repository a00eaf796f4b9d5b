// Every public validation job states the layout its source ran (validation/jobs, validation/qwen/jobs): that
// layout is a point of the space `ftbound search` walks on the job's own hardware, and the best configuration
// the search finds is at least as fast, by the plan, as the published one whenever the published one fits.
#include <gtest/gtest.h>

#include <filesystem>

#include "search/evaluate.hpp"
#include "search/search.hpp"
#include "search/search_space.hpp"
#include "spec/framework_support.hpp"
#include "spec/job_file.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

std::vector<std::string> validation_jobs() {
    std::vector<std::string> out;
    for (const char* dir : {"validation/jobs", "validation/qwen/jobs"}) {
        const std::filesystem::path p = std::filesystem::path(ftb_test::source_dir()) / dir;
        for (const auto& e : std::filesystem::directory_iterator(p))
            if (e.path().extension() == ".yaml") out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(SearchPublished, LayoutInSpaceAndBestAtLeastAsFast) {
    const std::vector<std::string> jobs = validation_jobs();
    ASSERT_GT(jobs.size(), 300u);
    int fitting = 0;
    for (const std::string& path : jobs) {
        SCOPED_TRACE(path);
        const Job job = load_job(path);
        SearchRequest req;
        req.systems = {{job.system.name, job.system, true}};
        req.support = load_framework_support(job.spec.train.framework);
        req.top = 1;
        req.threads = 2;
        const SearchSpace space(job, req);
        EXPECT_TRUE(space.contains(layout_of(job, 0)));
        const MemoryResult mem = plan_memory(job);
        if (!fits_for_search(mem, false)) continue;   // the search only ranks configurations that fit
        ++fitting;
        const SearchResult r = run_search(job, req);
        ASSERT_FALSE(r.top.empty());
        const Metrics published = full_metrics(job, mem, false);
        EXPECT_LE(r.top.front().metrics.step_seconds, published.step_seconds * (1 + 1e-12))
            << "best " << layout_summary(r.top.front().layout) << " vs published " << layout_summary(layout_of(job, 0));
    }
    EXPECT_GT(fitting, 250);
}

}  // namespace
}  // namespace ftb
