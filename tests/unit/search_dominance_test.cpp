// The claims the search's walk rests on (src/search/search.cpp), checked around every public validation job's
// own layout, with the memory and step models as they are:
//   - each offload level holds no more on the GPU than the one before (except with paged optimizer states,
//     which the walk treats apart: SearchSpace::offload_choices); selective recompute no more than none
//     (so when the least-memory settings do not fit, nothing does); the memory band is never wider than
//     kMaxBandFraction of the figure (could_fit_on_device);
//   - torch.compile, the fused loss and sequence parallelism never cost memory, time, money or energy.
// When a model change breaks one of them, the search would skip a configuration: this test says which.
// (Adding recompute or offload to a configuration that fits is NOT assumed to be no better: in the step model
// recompute can shrink activation-offload traffic and lengthen the window that hides communication, and offload
// can lower energy; the search plans every recompute variant.)
#include <gtest/gtest.h>

#include <filesystem>

#include "ftbound/error.hpp"
#include "search/evaluate.hpp"
#include "search/search_space.hpp"
#include "spec/framework_support.hpp"
#include "spec/job_file.hpp"
#include "test_paths.hpp"

namespace ftb {
namespace {

// Relative slack for figures that must not grow: float noise only.
constexpr double kSlack = 1e-12;

std::vector<std::string> validation_jobs() {
    std::vector<std::string> out;
    for (const char* dir : {"validation/jobs", "validation/qwen/jobs"})
        for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(ftb_test::source_dir()) / dir))
            if (e.path().extension() == ".yaml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

struct Planned {
    bool valid = false;
    MemoryResult memory;
    Metrics metrics;
};

Planned plan(const Job& base, const Layout& l) {
    Planned p;
    const Job j = apply_layout(base, l, base.system);
    try {
        check_job(j);
    } catch (const InputError&) {
        return p;
    }
    p.valid = true;
    p.memory = plan_memory(j);
    p.metrics = fits_for_search(p.memory, false) ? full_metrics(j, p.memory, false) : memory_metrics(j, p.memory, false);
    return p;
}

void expect_no_worse(const Planned& worse, const Planned& better_one, const std::string& what) {
    EXPECT_GE(worse.metrics.step_seconds, better_one.metrics.step_seconds * (1 - kSlack)) << what;
    EXPECT_GE(worse.metrics.time_seconds, better_one.metrics.time_seconds * (1 - kSlack)) << what;
    EXPECT_GE(worse.metrics.energy_kwh, better_one.metrics.energy_kwh * (1 - kSlack)) << what;
    if (worse.metrics.cost && better_one.metrics.cost) {
        EXPECT_GE(*worse.metrics.cost, *better_one.metrics.cost * (1 - kSlack)) << what;
    }
}

Layout with_savers(Layout l, const OffloadLevel& o, Recompute r) {
    l.offload_optimizer = o.optimizer, l.offload_params = o.params, l.offload_activations = o.activations;
    l.recompute = r;
    return l;
}

TEST(SearchDominance, MemorySaversAndFreeImprovements) {
    int checked = 0;
    for (const std::string& path : validation_jobs()) {
        SCOPED_TRACE(path);
        const Job job = load_job(path);
        SearchRequest req;
        req.systems = {{job.system.name, job.system, true}};
        req.support = load_framework_support(job.spec.train.framework);
        const SearchSpace space(job, req);
        const Layout own = canonical(layout_of(job, 0));
        // The standard offload levels (none, then each one more kind of state on the host) x recompute variants.
        const OffloadChoices choices = space.offload_choices(own);
        std::vector<OffloadLevel> levels = {OffloadLevel{}};
        levels.insert(levels.end(), choices.when_needed.begin(), choices.when_needed.end());
        const std::vector<Recompute>& chain = space.recompute_chain();
        std::vector<std::vector<Planned>> grid(levels.size());
        for (size_t o = 0; o < levels.size(); ++o)
            for (Recompute r : chain) grid[o].push_back(plan(job, with_savers(own, levels[o], r)));
        for (size_t o = 0; o < levels.size(); ++o)
            for (size_t r = 0; r < chain.size(); ++r) {
                const Planned& cell = grid[o][r];
                if (!cell.valid) continue;
                ++checked;
                // could_fit_on_device relies on the band's width.
                EXPECT_LE(cell.memory.band_high_bytes - cell.memory.device_used_bytes,
                          kMaxBandFraction * cell.memory.device_used_bytes * (1 + kSlack));
                EXPECT_LE(cell.memory.device_used_bytes - cell.memory.band_low_bytes,
                          kMaxBandFraction * cell.memory.device_used_bytes * (1 + kSlack));
                const std::string at = "offload level " + std::to_string(o) + ", recompute " + to_string(chain[r]);
                if (o > 0 && grid[o - 1][r].valid && own.optimizer != Optimizer::paged_adamw_8bit) {
                    EXPECT_LE(cell.memory.device_used_bytes, grid[o - 1][r].memory.device_used_bytes) << at;
                }
                if (chain[r] == Recompute::selective && chain[0] == Recompute::none && grid[o][0].valid) {
                    EXPECT_LE(cell.memory.device_used_bytes, grid[o][0].memory.device_used_bytes) << at;
                }
            }
        // Free improvements, one at a time, from the job's own layout.
        const Planned base = plan(job, own);
        if (!base.valid) continue;
        auto improved = [&](Layout l, const char* what) {
            if (l == own) return;
            const Planned p = plan(job, l);
            if (!p.valid) return;
            EXPECT_LE(p.memory.device_used_bytes, base.memory.device_used_bytes) << what;
            if (base.metrics.fits && p.metrics.fits) expect_no_worse(base, p, what);
        };
        const FrameworkSupport& sup = req.support;
        Layout l = own;
        l.compile = sup.compile || own.compile;
        improved(l, "torch.compile");
        l = own;
        if (std::find(sup.losses.begin(), sup.losses.end(), LossImpl::fused) != sup.losses.end()) l.loss = LossImpl::fused;
        improved(l, "fused loss");
        l = own;
        l.sequence_parallel = own.tp > 1 && (sup.sequence_parallel || own.sequence_parallel);
        improved(l, "sequence parallel");
    }
    EXPECT_GT(checked, 600);
}

}  // namespace
}  // namespace ftb
