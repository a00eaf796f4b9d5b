#include "trace/trace_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "ftbound/error.hpp"

namespace ftb::trace {

namespace {

constexpr double kNsPerSecond = 1e9;

enum Busy { kCompute = 0, kComm = 1, kCopy = 2 };

Busy busy_class(const GpuOp& op) {
    if (op.kind != GpuOpKind::kernel) return kCopy;
    return op.is_communication ? kComm : kCompute;
}

struct Gap {
    std::int64_t start_ns, end_ns;
};

// Total length of the overlap of [a0, a1) with a sorted, disjoint list of ranges.
std::int64_t overlap_with(std::int64_t a0, std::int64_t a1, const std::vector<HostRange>& merged) {
    std::int64_t total = 0;
    auto it = std::upper_bound(merged.begin(), merged.end(), a0,
                               [](std::int64_t t, const HostRange& r) { return t < r.end_ns; });
    for (; it != merged.end() && it->start_ns < a1; ++it)
        total += std::max<std::int64_t>(0, std::min(a1, it->end_ns) - std::max(a0, it->start_ns));
    return total;
}

std::vector<HostRange> merge_ranges(std::vector<HostRange> ranges) {
    std::sort(ranges.begin(), ranges.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    std::vector<HostRange> merged;
    for (auto& r : ranges) {
        if (!merged.empty() && r.start_ns <= merged.back().end_ns) merged.back().end_ns = std::max(merged.back().end_ns, r.end_ns);
        else merged.push_back(r);
    }
    return merged;
}

std::string percent(double f) { return fmt::format("{:.0f}%", 100.0 * f); }

}  // namespace

RankAnalysis analyse_rank(const TraceTables& t, std::int64_t fallback_rank, std::size_t top_kernel_count) {
    RankAnalysis r;
    r.rank = t.rank.value_or(fallback_rank);
    if (t.gpu_ops.empty())
        throw InputError("", "traceEvents",
                         "no GPU kernels, copies or memsets: was the profiler run with ProfilerActivity.CUDA?");

    // The rank's GPU: the device with the most GPU-op time (a rank drives one GPU in DDP/FSDP jobs).
    std::map<std::int32_t, std::int64_t> busy_by_device;
    for (auto& op : t.gpu_ops) busy_by_device[op.device] += op.end_ns - op.start_ns;
    r.device = std::max_element(busy_by_device.begin(), busy_by_device.end(),
                                [](auto& a, auto& b) { return a.second < b.second; })->first;
    if (busy_by_device.size() > 1)
        r.warnings.push_back(fmt::format("rank {}: GPU ops on {} devices; analysed device {} (the busiest)", r.rank,
                                         busy_by_device.size(), r.device));
    std::vector<GpuOp> ops;
    ops.reserve(t.gpu_ops.size());
    for (auto& op : t.gpu_ops)
        if (op.device == r.device) ops.push_back(op);
    std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });

    // Window: the profiler steps' span where marked, else the span of all host and GPU activity.
    std::vector<ProfilerStep> steps = t.steps;
    std::sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    if (!steps.empty()) {
        r.window_start_ns = steps.front().start_ns;
        r.window_end_ns = steps.front().end_ns;
        for (auto& s : steps) r.window_end_ns = std::max(r.window_end_ns, s.end_ns);
        r.window_from_steps = true;
        for (auto& s : steps) r.steps.push_back({s.number, (s.end_ns - s.start_ns) / kNsPerSecond});
    } else {
        r.window_start_ns = t.first_ns;
        r.window_end_ns = t.last_ns;
    }
    const std::int64_t w0 = r.window_start_ns, w1 = r.window_end_ns;
    if (w1 <= w0) throw InputError("", "traceEvents", "the trace spans no time: nothing to analyse");
    r.window_seconds = (w1 - w0) / kNsPerSecond;

    // Sweep over op boundaries clipped to the window: which classes run in each segment.
    struct Edge {
        std::int64_t t;
        int cls;
        int delta;
    };
    std::vector<Edge> edges;
    edges.reserve(ops.size() * 2);
    for (auto& op : ops) {
        std::int64_t a = std::max(op.start_ns, w0), b = std::min(op.end_ns, w1);
        if (b <= a) continue;
        edges.push_back({a, busy_class(op), +1});
        edges.push_back({b, busy_class(op), -1});
    }
    std::sort(edges.begin(), edges.end(), [](auto& a, auto& b) { return a.t < b.t; });
    std::int64_t active[3] = {0, 0, 0};
    std::int64_t compute_ns = 0, comm_only_ns = 0, copy_only_ns = 0, idle_ns = 0, comm_any_ns = 0, comm_and_compute_ns = 0;
    std::vector<Gap> gaps;
    std::int64_t cursor = w0;
    auto account = [&](std::int64_t until) {
        std::int64_t len = until - cursor;
        if (len <= 0) return;
        if (active[kComm] > 0) comm_any_ns += len;
        if (active[kCompute] > 0) {
            compute_ns += len;
            if (active[kComm] > 0) comm_and_compute_ns += len;
        } else if (active[kComm] > 0) {
            comm_only_ns += len;
        } else if (active[kCopy] > 0) {
            copy_only_ns += len;
        } else {
            idle_ns += len;
            if (!gaps.empty() && gaps.back().end_ns == cursor) gaps.back().end_ns = until;
            else gaps.push_back({cursor, until});
        }
        cursor = until;
    };
    for (auto& e : edges) {
        account(e.t);
        active[e.cls] += e.delta;
    }
    account(w1);
    const double window_ns = static_cast<double>(w1 - w0);
    r.gpu.compute = compute_ns / window_ns;
    r.gpu.communication = comm_only_ns / window_ns;
    r.gpu.memcpy = copy_only_ns / window_ns;
    r.gpu.idle = idle_ns / window_ns;
    r.communication_seconds = comm_any_ns / kNsPerSecond;
    r.comm_compute_overlap = comm_any_ns > 0 ? static_cast<double>(comm_and_compute_ns) / comm_any_ns : 0.0;

    // Idle split: each gap is judged by the op that ends it and the host call that launched that op.
    std::unordered_map<std::int64_t, const RuntimeCall*> launch_of;
    launch_of.reserve(t.runtime_calls.size());
    for (auto& c : t.runtime_calls) launch_of.emplace(c.correlation, &c);
    // Flow ends fill in correlations that an op's args lack (the flow id is the correlation in Kineto).
    std::unordered_map<std::int64_t, std::int64_t> flow_at_ts;
    for (auto& f : t.flow_ends) flow_at_ts.emplace(f.ts_ns, f.id);
    auto launch_for = [&](const GpuOp& op) -> const RuntimeCall* {
        std::int64_t corr = op.correlation;
        if (corr < 0) {
            auto f = flow_at_ts.find(op.start_ns);
            if (f == flow_at_ts.end()) return nullptr;
            corr = f->second;
        }
        auto it = launch_of.find(corr);
        return it == launch_of.end() ? nullptr : it->second;
    };
    std::vector<HostRange> loader = merge_ranges(t.dataloader_ranges);
    std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0, host_wait_loader_ns = 0;
    for (auto& g : gaps) {
        auto next = std::lower_bound(ops.begin(), ops.end(), g.end_ns,
                                     [](const GpuOp& op, std::int64_t t0) { return op.start_ns < t0; });
        const RuntimeCall* launch = nullptr;
        for (auto it = next; it != ops.end() && it->start_ns == next->start_ns; ++it) {
            const RuntimeCall* c = launch_for(*it);
            if (c && (!launch || c->start_ns < launch->start_ns)) launch = c;
        }
        const std::int64_t len = g.end_ns - g.start_ns;
        if (launch && launch->start_ns >= g.start_ns) {
            host_wait_ns += len;
            host_wait_loader_ns += overlap_with(g.start_ns, g.end_ns, loader);
        } else if (len < kKernelWaitThresholdNs && next != ops.end()) {
            kernel_wait_ns += len;
        } else {
            other_ns += len;
        }
    }
    r.idle.host_wait = host_wait_ns / window_ns;
    r.idle.kernel_wait = kernel_wait_ns / window_ns;
    r.idle.other = other_ns / window_ns;
    r.idle.host_wait_in_dataloader = host_wait_loader_ns / window_ns;

    // Copies, kernels and collectives of ops that start in the window.
    std::unordered_map<std::uint32_t, KernelTotal> by_name;
    std::int64_t kernel_ns_total = 0;
    const std::int64_t base = t.base_time_ns.value_or(0);
    std::map<std::int64_t, std::int64_t> ordinal_in_step;
    for (auto& op : ops) {
        if (op.start_ns < w0 || op.start_ns >= w1) continue;
        const RuntimeCall* launch = launch_for(op);
        if (launch) ++r.launches_joined;
        else ++r.launches_missing;
        const std::int64_t dur = op.end_ns - op.start_ns;
        if (op.kind == GpuOpKind::memcpy) {
            switch (op.direction) {
                case CopyDirection::h2d: r.memcpy.h2d_bytes += op.bytes; r.memcpy.h2d_ns += dur; break;
                case CopyDirection::d2h: r.memcpy.d2h_bytes += op.bytes; r.memcpy.d2h_ns += dur; break;
                case CopyDirection::d2d: r.memcpy.d2d_bytes += op.bytes; r.memcpy.d2d_ns += dur; break;
                default: r.memcpy.other_bytes += op.bytes; break;
            }
            if (op.pageable && (op.direction == CopyDirection::h2d || op.direction == CopyDirection::d2h))
                r.memcpy.pageable_bytes += op.bytes;
        }
        if (op.kind != GpuOpKind::kernel) continue;
        auto& k = by_name[op.name_id];
        ++k.count;
        k.seconds += dur / kNsPerSecond;
        kernel_ns_total += dur;
        if (op.is_communication) {
            CollectiveStart c;
            c.start_ns = base + op.start_ns;
            if (op.collective_seq >= 0) {
                c.step = -1;
                c.sequence = op.collective_seq;
            } else {
                const std::int64_t when = launch ? launch->start_ns : op.start_ns;
                auto s = std::upper_bound(steps.begin(), steps.end(), when,
                                          [](std::int64_t x, const ProfilerStep& st) { return x < st.start_ns; });
                if (s != steps.begin() && when < std::prev(s)->end_ns) c.step = std::prev(s)->number;
                else c.step = steps.empty() ? 0 : INT64_MIN;
                c.sequence = ordinal_in_step[c.step]++;
            }
            if (c.step != INT64_MIN) r.collectives.push_back(c);
        }
    }
    for (auto& [id, k] : by_name) {
        k.name = t.names[id];
        k.share = kernel_ns_total > 0 ? k.seconds * kNsPerSecond / kernel_ns_total : 0.0;
        r.top_kernels.push_back(k);
    }
    std::sort(r.top_kernels.begin(), r.top_kernels.end(), [](auto& a, auto& b) {
        return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
    });
    if (r.top_kernels.size() > top_kernel_count) r.top_kernels.resize(top_kernel_count);
    r.kernel_seconds = kernel_ns_total / kNsPerSecond;
    r.peak_allocated_bytes = t.peak_allocated_bytes;
    if (r.launches_missing > 0 && r.launches_joined == 0)
        r.warnings.push_back(fmt::format("rank {}: no GPU op could be joined to its launch; idle time cannot be "
                                         "attributed to the host",
                                         r.rank));
    return r;
}

std::string communication_resource(const std::vector<const TraceTables*>& tables) {
    std::int64_t world = 0, local_devices = 0;
    for (auto* t : tables) {
        world = std::max(world, t->world_size.value_or(0));
        local_devices = std::max<std::int64_t>(local_devices, static_cast<std::int64_t>(t->devices.size()));
    }
    if (world > 0 && local_devices > 0 && world <= local_devices) return "gpu_interconnect";
    return "network";
}

Diagnosis diagnose(const std::vector<const TraceTables*>& tables, std::vector<RankAnalysis> per_rank,
                   std::size_t top_kernel_count) {
    FTB_ASSERT(!per_rank.empty() && per_rank.size() == tables.size());
    Diagnosis d;
    const double n = static_cast<double>(per_rank.size());
    std::map<std::string, KernelTotal> kernels;
    std::int64_t step_count = 0;
    double step_sum = 0;
    for (auto& r : per_rank) {
        d.window_seconds += r.window_seconds / n;
        d.gpu.compute += r.gpu.compute / n;
        d.gpu.communication += r.gpu.communication / n;
        d.gpu.memcpy += r.gpu.memcpy / n;
        d.gpu.idle += r.gpu.idle / n;
        d.idle.host_wait += r.idle.host_wait / n;
        d.idle.kernel_wait += r.idle.kernel_wait / n;
        d.idle.other += r.idle.other / n;
        d.idle.host_wait_in_dataloader += r.idle.host_wait_in_dataloader / n;
        d.comm_compute_overlap += r.comm_compute_overlap / n;
        d.communication_seconds += r.communication_seconds / n;
        auto& m = d.memcpy;
        m.h2d_bytes += r.memcpy.h2d_bytes; m.d2h_bytes += r.memcpy.d2h_bytes; m.d2d_bytes += r.memcpy.d2d_bytes;
        m.other_bytes += r.memcpy.other_bytes; m.pageable_bytes += r.memcpy.pageable_bytes;
        m.h2d_ns += r.memcpy.h2d_ns; m.d2h_ns += r.memcpy.d2h_ns; m.d2d_ns += r.memcpy.d2d_ns;
        for (auto& s : r.steps) { step_sum += s.seconds; ++step_count; }
        if (r.peak_allocated_bytes) d.peak_allocated_bytes = std::max(d.peak_allocated_bytes.value_or(0), *r.peak_allocated_bytes);
        for (auto& w : r.warnings) d.warnings.push_back(w);
    }
    d.mean_step_seconds = step_count > 0 ? step_sum / step_count : 0.0;

    // Top kernels over all ranks, merged from each rank's list (a kernel outside a rank's top list is
    // missing from that rank's sum: exact for the kernels that lead everywhere, which are the ones shown).
    double total_kernel_seconds = 0;
    for (auto& r : per_rank) {
        total_kernel_seconds += r.kernel_seconds;
        for (auto& k : r.top_kernels) {
            auto& e = kernels[k.name];
            e.name = k.name;
            e.count += k.count;
            e.seconds += k.seconds;
        }
    }
    for (auto& [name, k] : kernels) d.top_kernels.push_back(k);
    std::sort(d.top_kernels.begin(), d.top_kernels.end(), [](auto& a, auto& b) {
        return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
    });
    if (d.top_kernels.size() > top_kernel_count) d.top_kernels.resize(top_kernel_count);
    for (auto& k : d.top_kernels) k.share = total_kernel_seconds > 0 ? k.seconds / total_kernel_seconds : 0.0;

    // Across ranks.
    if (per_rank.size() >= 2) {
        std::map<std::int64_t, std::vector<double>> step_durations;
        for (auto& r : per_rank)
            for (auto& s : r.steps) step_durations[s.number].push_back(s.seconds);
        double skew_sum = 0;
        int common = 0;
        for (auto& [num, durs] : step_durations) {
            if (durs.size() != per_rank.size()) continue;
            auto [lo, hi] = std::minmax_element(durs.begin(), durs.end());
            skew_sum += *hi - *lo;
            ++common;
        }
        if (common > 0) d.step_skew_seconds = skew_sum / common;

        std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> starts;
        for (std::size_t i = 0; i < per_rank.size(); ++i)
            for (auto& c : per_rank[i].collectives) {
                auto& v = starts[{c.step, c.sequence}];
                if (v.size() == i) v.push_back(c.start_ns);  // first collective with this key on this rank
            }
        std::vector<double> lateness(per_rank.size(), 0.0);
        std::int64_t matched = 0;
        for (auto& [key, v] : starts) {
            if (v.size() != per_rank.size()) continue;
            const std::int64_t earliest = *std::min_element(v.begin(), v.end());
            for (std::size_t i = 0; i < v.size(); ++i) lateness[i] += (v[i] - earliest) / kNsPerSecond;
            ++matched;
        }
        if (matched > 0) {
            auto worst = std::max_element(lateness.begin(), lateness.end()) - lateness.begin();
            Straggler s;
            s.rank = per_rank[static_cast<std::size_t>(worst)].rank;
            s.mean_lateness_seconds = lateness[static_cast<std::size_t>(worst)] / matched;
            s.collectives_matched = matched;
            d.straggler = s;
        }
    }

    // Bottleneck: the largest loss when it is large (or larger than compute), else compute.
    struct Candidate {
        std::string resource;
        double share;
        std::string evidence;
    };
    std::vector<Candidate> losses;
    const double idle = d.gpu.idle;
    {
        const double hw = d.idle.host_wait;
        const bool loader = hw > 0 && d.idle.host_wait_in_dataloader >= 0.5 * hw;
        std::string ev = fmt::format("GPU idle {} of the window, {} of it waiting for the host to launch work", percent(idle),
                                     percent(idle > 0 ? hw / idle : 0));
        if (loader) ev += fmt::format(", {} of that while the DataLoader ran", percent(d.idle.host_wait_in_dataloader / hw));
        else ev += " (not while a DataLoader ran: host-side Python/CPU work)";
        losses.push_back({loader ? "data_loading" : "host_cpu", hw, ev});
    }
    losses.push_back({"launch_overhead", d.idle.kernel_wait,
                      fmt::format("GPU idle {} of the window in gaps under {} us between ops already launched",
                                  percent(d.idle.kernel_wait), kKernelWaitThresholdNs / 1000)});
    losses.push_back({"idle", d.idle.other,
                      fmt::format("GPU idle {} of the window with the next op already launched and no host cause "
                                  "(synchronisation or waits on events)",
                                  percent(d.idle.other))});
    losses.push_back({communication_resource(tables), d.gpu.communication,
                      fmt::format("communication kernels run exposed (no compute beside them) {} of the window; "
                                  "{} of communication time is hidden under compute",
                                  percent(d.gpu.communication), percent(d.comm_compute_overlap))});
    {
        const bool host_copies = d.memcpy.h2d_bytes + d.memcpy.d2h_bytes >= d.memcpy.d2d_bytes;
        losses.push_back({host_copies ? "pcie" : "memory_bandwidth", d.gpu.memcpy,
                          fmt::format("copies and memsets run alone {} of the window (H2D {:.1f} GB/s, D2H {:.1f} GB/s, "
                                      "{} of host copy bytes pageable)",
                                      percent(d.gpu.memcpy), d.memcpy.h2d_GBps(), d.memcpy.d2h_GBps(),
                                      percent(d.memcpy.pageable_fraction()))});
    }
    auto largest = std::max_element(losses.begin(), losses.end(), [](auto& a, auto& b) { return a.share < b.share; });
    if (largest->share > 0 && (largest->share >= kLargeLossShare || largest->share >= d.gpu.compute)) {
        d.bottleneck = {largest->resource, largest->share, largest->evidence + ": " + largest->resource};
    } else {
        d.bottleneck = {"compute", d.gpu.compute,
                        fmt::format("compute kernels run {} of the window; the largest loss ({}) is {}: compute",
                                    percent(d.gpu.compute), largest->resource, percent(largest->share))};
    }
    d.ranks = std::move(per_rank);
    return d;
}

}  // namespace ftb::trace
