// make_plan: everything `ftbound plan` predicts for one job, assembled from the memory walk, the limits,
// fit advice, the step schedule, weak points, operations and recommendations.
#include <algorithm>

#include "ftbound/plan.hpp"

namespace ftb {

Plan make_plan(const Job& job, const PlanOptions& options) {
    Plan plan;
    plan.memory = plan_memory(job, &plan.memory_walk);
    if (options.limits) {
        plan.max_micro_batch = max_micro_batch(job);
        plan.max_seq_len = max_seq_len(job);
    }
    if (options.fit_advice && !(plan.memory.verdict == MemoryVerdict::fits && plan.memory.host_fits)) plan.fixes = changes_that_fit(job);
    plan.time = plan_time(job, plan.memory);
    plan.ops = plan_operations(job, plan.memory, plan.time);
    if (options.weak_points) {
        plan.weak_points = weak_points(job, plan.memory, plan.time);
        // "The resource that bounds the step most" is the one whose improvement would speed it up most; the
        // attribution leader can differ when two resources are nearly balanced (a transfer as long as the
        // compute it overlaps).
        auto impact_of = [&](Resource r) {
            for (const auto& w : plan.weak_points)
                if (w.resource == r) return w.impact;
            return 1.0;
        };
        const WeakPoint& top = plan.weak_points.front();
        if (top.resource != Resource::memory_capacity && top.resource != plan.time.bottleneck &&
            top.impact > impact_of(plan.time.bottleneck) + 0.005) {
            plan.time.bottleneck = top.resource;
            double share = 0;
            for (const auto& p : plan.time.breakdown)
                if (p.resource == top.resource) share += p.seconds;
            plan.time.bottleneck_share = plan.time.step_seconds > 0 ? share / plan.time.step_seconds : 0;
            plan.time.bottleneck_sentence = describe_bottleneck(job, plan.time);
        }
        // The supplies: a node that draws more than one side of its redundant supplies throttles (or stops)
        // when a supply fails.
        const PowerDraw& pw = plan.ops.power;
        if (pw.psu_known && (pw.exceeds_redundant_capacity || pw.exceeds_capacity)) {
            WeakPoint w;
            w.resource = Resource::power;
            w.what = pw.note;
            w.impact = pw.exceeds_capacity ? 1.0 / std::max(1e-9, pw.sustained_factor)
                                           : 1.0 / std::max(1e-9, pw.throttle_factor);
            // Ranked with the others by impact (memory headroom stays last).
            auto pos = std::find_if(plan.weak_points.begin(), plan.weak_points.end(), [&](const WeakPoint& x) {
                return x.resource == Resource::memory_capacity || x.impact < w.impact;
            });
            plan.weak_points.insert(pos, w);
        }
    }
    if (options.recommendations && plan.memory.fits) plan.recommendations = recommend(job, plan.memory, plan.time);
    return plan;
}

}  // namespace ftb
