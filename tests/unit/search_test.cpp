// run_search (src/search/search.cpp): the pruning is exact (a brute-force walk of the same space finds the same
// best and front), the answer does not depend on the thread count, and empty answers name the constraint.
#include <gtest/gtest.h>

#include <algorithm>

#include "ftbound/error.hpp"
#include "ftbound/timing.hpp"
#include "plan_test_util.hpp"
#include "search/evaluate.hpp"
#include "search/pareto.hpp"
#include "search/search.hpp"
#include "search/search_space.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

using plan_test::tiny_job;

// Tiny Llama on one or two nodes of 8 H100, global batch 16, seq 64, data and price given (whole-job figures).
Job tiny_cluster_job() {
    return tiny_job({{"train.global_batch", "16"}, {"train.seq_len", "64"}, {"hardware.inter_node", "ib-ndr-400"},
                     {"data.tokens", "1.0e7"}, {"ops.price_per_gpu_hour", "2.0"}},
                    8);
}

SearchRequest cluster_request(const Job& job, unsigned threads) {
    SearchRequest r;
    r.systems = {{job.system.name, job.system, true}};
    r.nodes = {1, 2};
    r.threads = threads;
    r.top = 4;
    return r;
}

bool same(const Candidate& a, const Candidate& b) {
    return a.layout == b.layout && a.metrics.time_seconds == b.metrics.time_seconds &&
           a.metrics.energy_kwh == b.metrics.energy_kwh && a.metrics.cost == b.metrics.cost;
}

TEST(Search, SameAnswerForAnyThreadCount) {
    const Job job = tiny_cluster_job();
    const SearchResult one = run_search(job, cluster_request(job, 1));
    ASSERT_GT(one.feasible, 0);
    for (unsigned threads : {2u, 3u, 8u}) {
        SCOPED_TRACE(threads);
        const SearchResult r = run_search(job, cluster_request(job, threads));
        EXPECT_EQ(r.evaluated, one.evaluated);
        EXPECT_EQ(r.timed, one.timed);
        EXPECT_EQ(r.feasible, one.feasible);
        ASSERT_EQ(r.top.size(), one.top.size());
        for (size_t i = 0; i < r.top.size(); ++i) EXPECT_TRUE(same(r.top[i], one.top[i])) << i;
        ASSERT_EQ(r.front.size(), one.front.size());
        for (size_t i = 0; i < r.front.size(); ++i) EXPECT_TRUE(same(r.front[i], one.front[i])) << i;
    }
}

// Every configuration of the space planned without any pruning: the search's best and front must match.
// The space's one memory-dependent rule is kept: the framework's offloads count only where no offload (and
// the job's own setting) does not fit, up to the first offload level that fits.
TEST(Search, PruningIsExactAgainstBruteForce) {
    const Job job = tiny_cluster_job();
    const SearchRequest req = cluster_request(job, 2);
    const SearchResult fast = run_search(job, req);
    const SearchSpace space(job, req);
    std::optional<Candidate> best;
    ParetoFront front;
    int64_t fitting = 0;
    // Plans one cell; true when it fits (and then it is a point of the space that fits).
    auto cell = [&](Layout l, const OffloadLevel& o, Recompute rc) {
        l.recompute = rc;
        l.offload_optimizer = o.optimizer, l.offload_params = o.params, l.offload_activations = o.activations;
        const Job j = apply_layout(job, l, req.systems[0].spec);
        try {
            check_job(j);
        } catch (const InputError&) {
            return false;
        }
        const MemoryResult mem = plan_memory(j);
        if (!fits_for_search(mem, false)) return false;
        ++fitting;
        const Candidate c{l, full_metrics(j, mem, false)};
        if (!best || better(c, *best, Objective::time)) best = c;
        front.offer(c);
        return true;
    };
    for (const Mesh& m : space.meshes())
        for (Layout l : space.variants(m))
            for (int64_t mb : space.micro_batches(m)) {
                l.micro_batch = mb;
                const OffloadChoices off = space.offload_choices(l);
                bool fits = false;
                for (const OffloadLevel& o : off.always)
                    for (Recompute rc : space.recompute_chain()) fits |= cell(l, o, rc);
                for (size_t i = 0; i < off.when_needed.size() && !fits; ++i)
                    for (Recompute rc : space.recompute_chain()) fits |= cell(l, off.when_needed[i], rc);
            }
    ASSERT_TRUE(best);
    EXPECT_GE(fitting, fast.feasible);   // the search skips variants without the free improvements
    ASSERT_FALSE(fast.top.empty());
    EXPECT_TRUE(same(fast.top.front(), *best)) << layout_summary(fast.top.front().layout) << " vs " << layout_summary(best->layout);
    const std::vector<Candidate> want = front.sorted_by_time();
    ASSERT_EQ(fast.front.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same(fast.front[i], want[i])) << i;
}

TEST(Search, BestIsAtLeastAsFastAsTheJobAsWritten) {
    const Job job = tiny_cluster_job();
    const SearchResult r = run_search(job, cluster_request(job, 2));
    ASSERT_TRUE(r.baseline);
    ASSERT_TRUE(r.baseline->metrics.fits);
    ASSERT_FALSE(r.top.empty());
    EXPECT_LE(r.top.front().metrics.time_seconds, r.baseline->metrics.time_seconds);
    // Ranked by time, best first; the front is sorted fastest first and no member dominates another.
    for (size_t i = 1; i < r.top.size(); ++i) EXPECT_TRUE(better(r.top[i - 1], r.top[i], Objective::time));
    for (const Candidate& a : r.front)
        for (const Candidate& b : r.front)
            if (!(a.layout == b.layout)) {
                EXPECT_FALSE(dominates(a, b));
            }
}

TEST(Search, ObjectiveCostPrefersFewerGpuHours) {
    const Job job = tiny_cluster_job();
    SearchRequest req = cluster_request(job, 2);
    req.objective = Objective::cost;
    const SearchResult r = run_search(job, req);
    ASSERT_FALSE(r.top.empty());
    for (const Candidate& c : r.front) EXPECT_GE(*c.metrics.cost, *r.top.front().metrics.cost);
}

TEST(Search, ImpossibleDeadlineNamesItAndTheFastest) {
    const Job job = tiny_cluster_job();
    SearchRequest req = cluster_request(job, 2);
    req.deadline_seconds = 1e-9;
    const SearchResult r = run_search(job, req);
    EXPECT_EQ(r.feasible, 0);
    EXPECT_TRUE(r.top.empty());
    EXPECT_TRUE(r.front.empty());
    ASSERT_TRUE(r.bound_by);
    EXPECT_EQ(r.bound_by->constraint, "deadline");
    ASSERT_TRUE(r.bound_by->nearest);
    // The nearest is the fastest configuration of an unconstrained search.
    const SearchResult free = run_search(job, cluster_request(job, 2));
    EXPECT_TRUE(same(*r.bound_by->nearest, free.top.front()));
}

TEST(Search, BudgetBindsAfterTheDeadline) {
    const Job job = tiny_cluster_job();
    SearchRequest req = cluster_request(job, 2);
    req.budget = 1e-12;
    const SearchResult r = run_search(job, req);
    ASSERT_TRUE(r.bound_by);
    EXPECT_EQ(r.bound_by->constraint, "budget");
    ASSERT_TRUE(r.bound_by->nearest);
}

TEST(Search, NothingFitsNamesMemoryAndTheClosest) {
    // Llama 3.1 70B full fine-tuning on one 24 GB card: nothing fits, whatever the layout.
    const Job job = job_from_document(Json::parse(R"({"model": "meta-llama/Llama-3.1-70B",
        "train": {"method": "full", "micro_batch": 1, "global_batch": 4, "seq_len": 2048},
        "hardware": {"gpu": "rtx-4090", "gpus_per_node": 1}})"), "70b-on-4090.json");
    SearchRequest req;
    req.systems = {{job.system.name, job.system, true}};
    req.threads = 2;
    const SearchResult r = run_search(job, req);
    EXPECT_EQ(r.feasible, 0);
    ASSERT_TRUE(r.bound_by);
    EXPECT_EQ(r.bound_by->constraint, "memory");
    ASSERT_TRUE(r.bound_by->nearest);
    EXPECT_GT(memory_overshoot(r.bound_by->nearest->metrics), 1.0);
}

TEST(Search, GpuLimitBelowEveryLayout) {
    const Job job = tiny_cluster_job();
    SearchRequest req = cluster_request(job, 2);
    req.max_gpus = 4;   // one node has 8
    const SearchResult r = run_search(job, req);
    ASSERT_TRUE(r.bound_by);
    EXPECT_EQ(r.bound_by->constraint, "max_gpus");
}

}  // namespace
}  // namespace ftb
