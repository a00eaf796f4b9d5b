// make_plan: everything `ftbound plan` predicts for one job, assembled from the memory walk, the limits,
// fit advice, the step schedule, weak points, operations and recommendations.
#include <algorithm>

#include <fmt/format.h>

#include "ftbound/plan.hpp"
#include "ops/accuracy_notes.hpp"
#include "report/table.hpp"

namespace ftb {
namespace {

// A weak point in rank order (by impact; memory headroom stays last).
void insert_weak_point(std::vector<WeakPoint>& weak, const WeakPoint& w) {
    auto pos = std::find_if(weak.begin(), weak.end(), [&](const WeakPoint& x) {
        return x.resource == Resource::memory_capacity || x.impact < w.impact;
    });
    weak.insert(pos, w);
}

// Storage as a weak point: the whole job (checkpoint writes, restores after failures) re-planned with storage
// twice as fast; and training-data reads that outlast a step (the loader reads ahead under one step).
void add_storage_weak_points(const Job& job, Plan& plan) {
    const OperationsResult& o = plan.ops;
    if (o.has_job_length && o.reliability.progresses) {
        const OperationsResult faster = plan_operations(job, plan.memory, plan.time, 2.0);
        const double impact = faster.reliability.progresses && faster.reliability.wall_seconds > 0
                                  ? o.reliability.wall_seconds / faster.reliability.wall_seconds
                                  : 1.0;
        if (impact > 1.001)
            insert_weak_point(plan.weak_points,
                              {Resource::storage,
                               fmt::format("checkpoint storage ({}): {} per write, {} writing over the job",
                                           o.checkpoint_storage.name, fmt_seconds(o.checkpoint.seconds),
                                           fmt_seconds(o.reliability.checkpoint_overhead_seconds)),
                               impact});
    }
    if (o.data_read.exposed_seconds_per_step > 0) {
        const double step = plan.time.step_seconds;
        const double exposed_faster = std::max(0.0, o.data_read.seconds_per_step / 2 - step);
        insert_weak_point(plan.weak_points,
                          {Resource::data_loading,
                           fmt::format("training data from {}: {} of reads per step against a {} step",
                                       o.data_storage.name, fmt_seconds(o.data_read.seconds_per_step), fmt_seconds(step)),
                           (step + o.data_read.exposed_seconds_per_step) / (step + exposed_faster)});
    }
}

}  // namespace

Plan make_plan(const Job& job, const PlanOptions& options) {
    Plan plan;
    plan.memory = plan_memory(job, &plan.memory_walk);
    plan.typical_step_allocated_peak_bytes = typical_step_allocated_peak_bytes(job, plan.memory);
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
            insert_weak_point(plan.weak_points, w);
        }
        add_storage_weak_points(job, plan);
    }
    plan.accuracy_notes = accuracy_notes(job);
    if (options.recommendations && plan.memory.fits) plan.recommendations = recommend(job, plan.memory, plan.time);
    return plan;
}

}  // namespace ftb
