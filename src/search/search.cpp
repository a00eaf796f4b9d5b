// The search loop: meshes are handed to threads one at a time; each thread walks its mesh's variants,
// micro-batches and memory savers with its own copy of the job and keeps its own best, front and counts.
// Merging is a pure function of the configurations found, so any thread count gives the same answer.
#include "search/search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "ftbound/error.hpp"
#include "search/evaluate.hpp"
#include "search/pareto.hpp"
#include "search/search_space.hpp"
#include "spec/job_file.hpp"

namespace ftb {
namespace {

// Nearer to fitting: the smaller memory overshoot, ties by the layout order.
bool closer_to_fit(const Candidate& a, const Candidate& b) {
    const double x = memory_overshoot(a.metrics), y = memory_overshoot(b.metrics);
    return x != y ? x < y : a.layout < b.layout;
}

// Keeps the first of two candidates under a strict order.
void keep_min(std::optional<Candidate>& slot, const Candidate& c, const std::function<bool(const Candidate&, const Candidate&)>& less) {
    if (!slot || less(c, *slot)) slot = c;
}

// What one thread found.
struct Collector {
    int64_t evaluated = 0, fitting = 0, within_deadline = 0, feasible = 0;
    std::vector<Candidate> top;             // the best request.top + 1 by the objective, unsorted beyond that
    ParetoFront front;
    std::optional<Candidate> closest_to_fit;     // smallest memory overshoot among those that do not fit
    std::optional<Candidate> fastest;            // among those that fit
    std::optional<Candidate> cheapest;           // among those that fit and meet the deadline
};

class Walker {
public:
    Walker(const Job& base, const SearchRequest& req, const SearchSpace& space, Collector& out)
        : req_(req), space_(space), out_(out), work_(base) {}

    void walk(const Mesh& mesh) {
        work_.system = req_.systems[size_t(mesh.system)].spec;
        work_.system.nodes = mesh.nodes;
        for (const Layout& variant : space_.variants(mesh))
            if (!space_.lacks_free_improvement(variant)) walk_variant(mesh, variant);
    }

private:
    // Micro-batches smallest first; memory grows with the micro-batch (tests/unit/memory_monotonic_test.cpp),
    // so once no memory saver fits, no larger micro-batch can.
    void walk_variant(const Mesh& mesh, Layout l) {
        const OffloadChoices offload = space_.offload_choices(l);
        for (int64_t mb : space_.micro_batches(mesh)) {
            l.micro_batch = mb;
            if (!any_saver_fits(l, offload)) return;
            bool fits = false;
            for (const OffloadLevel& o : offload.always)
                for (Recompute r : space_.recompute_chain()) fits |= evaluate(with_savers(l, o, r));
            for (size_t i = 0; i < offload.when_needed.size() && !fits; ++i)
                for (Recompute r : space_.recompute_chain()) fits |= evaluate(with_savers(l, offload.when_needed[i], r));
        }
    }

    static Layout with_savers(Layout l, const OffloadLevel& o, Recompute r) {
        l.offload_optimizer = o.optimizer;
        l.offload_params = o.params;
        l.offload_activations = o.activations;
        l.recompute = r;
        return l;
    }

    // GPU memory falls from offload level to level, and selective recompute holds less than none
    // (tests/unit/search_dominance_test.cpp), so the least GPU memory of a micro-batch is at the least-memory
    // offload settings with selective or full recompute (full re-materialises a block in backward and can exceed
    // selective). When none of those could fit on the GPUs (could_fit_on_device), nothing at this micro-batch
    // can, nor at a larger one. A fit found here is not counted: the walk plans it again.
    bool any_saver_fits(const Layout& l, const OffloadChoices& offload) {
        const std::vector<Recompute>& chain = space_.recompute_chain();
        const bool has_selective = std::find(chain.begin(), chain.end(), Recompute::selective) != chain.end();
        std::vector<std::pair<Layout, MemoryResult>> misses;
        for (const OffloadLevel& o : offload.least_memory)
            for (Recompute r : chain) {
                if (r == Recompute::none && has_selective) continue;
                const Layout probe = with_savers(l, o, r);
                assign(probe);
                if (!valid()) continue;
                const MemoryResult mem = plan_memory(work_);
                if (could_fit_on_device(mem, req_.allow_tight)) return true;
                misses.emplace_back(probe, mem);
            }
        for (const auto& [probe, mem] : misses) {
            ++out_.evaluated;
            note_miss(probe, mem);
        }
        return false;
    }

    bool valid() {
        try {
            check_job(work_);
            return true;
        } catch (const InputError&) {
            return false;   // a rule of the layout (heads, layers, sequence) forbids it
        }
    }

    void note_miss(const Layout& l, const MemoryResult& mem) {
        keep_min(out_.closest_to_fit, {l, memory_metrics(work_, mem, req_.allow_tight)}, closer_to_fit);
    }

    // Plans one configuration; true when it fits.
    bool evaluate(const Layout& l) {
        assign(l);
        if (!valid()) return false;
        ++out_.evaluated;
        const MemoryResult mem = plan_memory(work_);
        if (!fits_for_search(mem, req_.allow_tight)) {
            note_miss(l, mem);
            return false;
        }
        ++out_.fitting;
        const Candidate c{l, full_metrics(work_, mem, req_.allow_tight)};
        keep_min(out_.fastest, c, [](const Candidate& a, const Candidate& b) { return better(a, b, Objective::time); });
        if (req_.deadline_seconds && c.metrics.time_seconds > *req_.deadline_seconds) return true;
        ++out_.within_deadline;
        keep_min(out_.cheapest, c, [](const Candidate& a, const Candidate& b) { return better(a, b, Objective::cost); });
        if (req_.budget && (!c.metrics.cost || *c.metrics.cost > *req_.budget)) return true;
        ++out_.feasible;
        keep_top(c);
        out_.front.offer(c);
        return true;
    }

    void keep_top(const Candidate& c) {
        const size_t keep = req_.top + 1;
        // A heap ordered by `better`: its front is the worst of those kept.
        auto order = [&](const Candidate& a, const Candidate& b) { return better(a, b, req_.objective); };
        if (out_.top.size() < keep) {
            out_.top.push_back(c);
            std::push_heap(out_.top.begin(), out_.top.end(), order);
        } else if (better(c, out_.top.front(), req_.objective)) {
            std::pop_heap(out_.top.begin(), out_.top.end(), order);
            out_.top.back() = c;
            std::push_heap(out_.top.begin(), out_.top.end(), order);
        }
    }

    void assign(const Layout& l) { write_layout(l, work_.spec); }

    const SearchRequest& req_;
    const SearchSpace& space_;
    Collector& out_;
    Job work_;
};

void merge(Collector& into, Collector&& from) {
    into.evaluated += from.evaluated, into.fitting += from.fitting;
    into.within_deadline += from.within_deadline, into.feasible += from.feasible;
    into.top.insert(into.top.end(), from.top.begin(), from.top.end());
    for (const Candidate& c : from.front.members()) into.front.offer(c);
    auto pick = [](std::optional<Candidate>& a, const std::optional<Candidate>& b, auto less) {
        if (b) keep_min(a, *b, less);
    };
    pick(into.closest_to_fit, from.closest_to_fit, closer_to_fit);
    pick(into.fastest, from.fastest, [](const Candidate& a, const Candidate& b) { return better(a, b, Objective::time); });
    pick(into.cheapest, from.cheapest, [](const Candidate& a, const Candidate& b) { return better(a, b, Objective::cost); });
}

std::string hours(double seconds) { return fmt::format("{:.1f} h", seconds / 3600.0); }

// Nothing feasible: the constraint that removed the last configurations, with the nearest one.
BoundBy explain_empty(const SearchRequest& req, const SearchSpace& space, const Collector& c) {
    BoundBy b;
    if (space.meshes().empty()) {
        if (space.meshes_over_gpu_limit() > 0) {
            b.constraint = "max_gpus";
            b.reason = fmt::format("every layout needs more than --max-gpus {} GPUs", req.max_gpus);
        } else {
            b.constraint = "layout";
            b.reason = "no parallel layout of these GPU counts splits the global batch evenly over its data-parallel ranks";
        }
        return b;
    }
    if (c.fitting == 0) {
        b.constraint = "memory";
        b.nearest = c.closest_to_fit;
        b.reason = c.closest_to_fit
                       ? fmt::format("no configuration fits in memory; the closest needs {:.0f}% of the memory it has",
                                     100 * memory_overshoot(c.closest_to_fit->metrics))
                       : "no configuration passes the layout rules (heads, layers, sequence length)";
        return b;
    }
    if (req.deadline_seconds && c.within_deadline == 0) {
        b.constraint = "deadline";
        b.nearest = c.fastest;
        b.reason = fmt::format("the fastest configuration that fits takes {}, the deadline is {}",
                               hours(c.fastest->metrics.time_seconds), hours(*req.deadline_seconds));
        return b;
    }
    b.constraint = "budget";
    b.nearest = c.cheapest;
    const std::optional<double> cost = c.cheapest ? c.cheapest->metrics.cost : std::nullopt;
    b.reason = fmt::format("the cheapest configuration that fits{} costs {}, the budget is {:.2f}",
                           req.deadline_seconds ? " and meets the deadline" : "",
                           cost ? fmt::format("{:.2f}", *cost) : std::string("an unknown amount (no price)"), *req.budget);
    return b;
}

}  // namespace

SearchResult run_search(const Job& job, const SearchRequest& req) {
    FTB_ASSERT(!req.systems.empty() && req.top > 0);
    const SearchSpace space(job, req);
    SearchResult result;
    result.meshes = int64_t(space.meshes().size());
    result.cost_known = job.spec.ops.price_per_gpu_hour.has_value() || job.spec.ops.price_per_node_hour.has_value();
    result.time_per_job = job.spec.data.tokens > 0;

    const unsigned threads = std::max(1u, std::min<unsigned>(req.threads, unsigned(std::max<size_t>(1, space.meshes().size()))));
    std::vector<Collector> found(threads);
    std::atomic<size_t> next{0}, done{0};
    auto work = [&](unsigned t) {
        Walker walker(job, req, space, found[t]);
        for (size_t i = next++; i < space.meshes().size(); i = next++) {
            walker.walk(space.meshes()[i]);
            ++done;
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work, t);
    if (req.progress) {
        while (done.load() < space.meshes().size()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            req.progress(done.load(), space.meshes().size());
        }
    }
    for (auto& th : pool) th.join();

    Collector all;
    for (Collector& c : found) merge(all, std::move(c));
    result.evaluated = all.evaluated;
    result.timed = all.fitting;
    result.feasible = all.feasible;
    std::sort(all.top.begin(), all.top.end(), [&](const Candidate& a, const Candidate& b) { return better(a, b, req.objective); });
    if (all.top.size() > req.top + 1) all.top.resize(req.top + 1);
    result.top = std::move(all.top);
    result.front = all.front.sorted_by_time();
    if (result.feasible == 0) result.bound_by = explain_empty(req, space, all);

    // The job as written, on its own system, planned the same way (shown beside the best). Its system index is
    // -1 when the search does not include the job's own server.
    int own = -1;
    for (size_t s = 0; s < req.systems.size() && own < 0; ++s)
        if (req.systems[s].is_job_system) own = int(s);
    result.job_layout = canonical(layout_of(job, own));
    if (own >= 0) {
        const MemoryResult mem = plan_memory(job);
        const bool fits = fits_for_search(mem, req.allow_tight);
        result.baseline = Candidate{result.job_layout, fits ? full_metrics(job, mem, req.allow_tight)
                                                              : memory_metrics(job, mem, req.allow_tight)};
    }
    return result;
}

}  // namespace ftb
