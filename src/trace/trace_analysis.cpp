#include "trace/trace_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
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

// The rank's GPU: the device with the most GPU-op time (a rank drives one GPU in DDP/FSDP jobs).
std::int32_t busiest_device(const TraceTables& t, RankAnalysis& r) {
    std::map<std::int32_t, std::int64_t> busy_by_device;
    for (auto& op : t.gpu_ops) busy_by_device[op.device] += op.end_ns - op.start_ns;
    const std::int32_t device = std::max_element(busy_by_device.begin(), busy_by_device.end(),
                                                 [](auto& a, auto& b) { return a.second < b.second; })->first;
    if (busy_by_device.size() > 1)
        r.warnings.push_back(fmt::format("rank {}: GPU ops on {} devices; analysed device {} (the busiest)", r.rank,
                                         busy_by_device.size(), device));
    return device;
}

std::vector<GpuOp> ops_on_device(const TraceTables& t, std::int32_t device) {
    std::vector<GpuOp> ops;
    ops.reserve(t.gpu_ops.size());
    for (auto& op : t.gpu_ops)
        if (op.device == device) ops.push_back(op);
    std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    return ops;
}

// Window: the profiler steps' span where marked (`steps` sorted by start), else the span of all host and GPU activity.
void set_window(const TraceTables& t, const std::vector<ProfilerStep>& steps, RankAnalysis& r) {
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
    if (r.window_end_ns <= r.window_start_ns)
        throw InputError("", "traceEvents", "the trace spans no time: nothing to analyse");
    r.window_seconds = (r.window_end_ns - r.window_start_ns) / kNsPerSecond;
}

// Time of the window by what the GPU runs: compute (with or without communication beside it), communication
// alone, copies alone, nothing (the idle gaps, merged where they touch).
struct BusySweep {
    std::int64_t compute_ns = 0, comm_only_ns = 0, copy_only_ns = 0, idle_ns = 0, comm_any_ns = 0,
                 comm_and_compute_ns = 0;
    std::vector<Gap> gaps;
};

// Sweep over op boundaries clipped to the window [w0, w1): which classes run in each segment.
BusySweep sweep_busy(const std::vector<GpuOp>& ops, std::int64_t w0, std::int64_t w1) {
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
    BusySweep out;
    std::int64_t active[3] = {0, 0, 0};
    std::int64_t cursor = w0;
    auto account = [&](std::int64_t until) {
        std::int64_t len = until - cursor;
        if (len <= 0) return;
        if (active[kComm] > 0) out.comm_any_ns += len;
        if (active[kCompute] > 0) {
            out.compute_ns += len;
            if (active[kComm] > 0) out.comm_and_compute_ns += len;
        } else if (active[kComm] > 0) {
            out.comm_only_ns += len;
        } else if (active[kCopy] > 0) {
            out.copy_only_ns += len;
        } else {
            out.idle_ns += len;
            if (!out.gaps.empty() && out.gaps.back().end_ns == cursor) out.gaps.back().end_ns = until;
            else out.gaps.push_back({cursor, until});
        }
        cursor = until;
    };
    for (auto& e : edges) {
        account(e.t);
        active[e.cls] += e.delta;
    }
    account(w1);
    return out;
}

// Index of the first element that carries each key: open addressing with linear probing in one array at most
// two-thirds full. Hundreds of thousands of launches per trace: a node-based map spent more time allocating than
// the analysis spends analysing.
class FirstIndexByKey {
public:
    explicit FirstIndexByKey(std::size_t count) {
        std::size_t capacity = 16;
        while (2 * capacity < 3 * count) capacity *= 2;
        slots_.resize(capacity);
        mask_ = capacity - 1;
    }
    // Keeps the index already stored for `key`, if any (the first element wins, like unordered_map::emplace).
    void insert(std::int64_t key, std::size_t index) {
        for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.index_plus_one == 0) {
                s = {key, static_cast<std::uint32_t>(index + 1)};
                return;
            }
            if (s.key == key) return;
        }
    }
    // The index stored for `key`, or SIZE_MAX.
    std::size_t find(std::int64_t key) const {
        for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.index_plus_one == 0) return SIZE_MAX;
            if (s.key == key) return s.index_plus_one - 1;
        }
    }

private:
    struct Slot {
        std::int64_t key = 0;
        std::uint32_t index_plus_one = 0;  // 0: empty
    };
    // splitmix64's finaliser: ids and timestamps are dense or strided; this spreads them over the slots.
    std::size_t slot_of(std::int64_t key) const {
        std::uint64_t x = static_cast<std::uint64_t>(key);
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        return static_cast<std::size_t>(x ^ (x >> 31)) & mask_;
    }
    std::vector<Slot> slots_;
    std::size_t mask_ = 0;
};

// The host call that launched a GPU op, by correlation id; flow ends fill in correlations that an op's args
// lack (the flow id is the correlation in Kineto).
class LaunchIndex {
public:
    explicit LaunchIndex(const TraceTables& t)
        : calls_(t.runtime_calls), flows_(t.flow_ends), launch_of_(t.runtime_calls.size()),
          flow_at_ts_(t.flow_ends.size()) {
        for (std::size_t i = 0; i < calls_.size(); ++i) launch_of_.insert(calls_[i].correlation, i);
        for (std::size_t i = 0; i < flows_.size(); ++i) flow_at_ts_.insert(flows_[i].ts_ns, i);
    }
    const RuntimeCall* launch_for(const GpuOp& op) const {
        std::int64_t corr = op.correlation;
        if (corr < 0) {
            const std::size_t f = flow_at_ts_.find(op.start_ns);
            if (f == SIZE_MAX) return nullptr;
            corr = flows_[f].id;
        }
        const std::size_t c = launch_of_.find(corr);
        return c == SIZE_MAX ? nullptr : &calls_[c];
    }

private:
    const std::vector<RuntimeCall>& calls_;
    const std::vector<FlowEnd>& flows_;
    FirstIndexByKey launch_of_;
    FirstIndexByKey flow_at_ts_;
};

// Idle split: each gap is judged by the op that ends it and the host call that launched that op.
void split_idle(const std::vector<Gap>& gaps, const std::vector<GpuOp>& ops, const LaunchIndex& launches,
                const std::vector<HostRange>& loader, double window_ns, RankAnalysis& r) {
    std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0, host_wait_loader_ns = 0;
    for (auto& g : gaps) {
        auto next = std::lower_bound(ops.begin(), ops.end(), g.end_ns,
                                     [](const GpuOp& op, std::int64_t t0) { return op.start_ns < t0; });
        const RuntimeCall* launch = nullptr;
        for (auto it = next; it != ops.end() && it->start_ns == next->start_ns; ++it) {
            const RuntimeCall* c = launches.launch_for(*it);
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
}

void add_copy(const GpuOp& op, MemcpyFigures& m) {
    const std::int64_t dur = op.end_ns - op.start_ns;
    switch (op.direction) {
        case CopyDirection::h2d: m.h2d_bytes += op.bytes; m.h2d_ns += dur; break;
        case CopyDirection::d2h: m.d2h_bytes += op.bytes; m.d2h_ns += dur; break;
        case CopyDirection::d2d: m.d2d_bytes += op.bytes; m.d2d_ns += dur; break;
        default: m.other_bytes += op.bytes; break;
    }
    if (op.pageable && (op.direction == CopyDirection::h2d || op.direction == CopyDirection::d2h))
        m.pageable_bytes += op.bytes;
}

// A collective's key across ranks: NCCL's sequence number where the trace has it, else its ordinal within the
// profiler step its launch falls in. INT64_MIN as step: launched outside every marked step (not matched).
CollectiveStart collective_start(const GpuOp& op, const RuntimeCall* launch, const std::vector<ProfilerStep>& steps,
                                 std::int64_t base_ns, std::map<std::int64_t, std::int64_t>& ordinal_in_step) {
    CollectiveStart c;
    c.start_ns = base_ns + op.start_ns;
    if (op.collective_seq >= 0) {
        c.step = -1;
        c.sequence = op.collective_seq;
        return c;
    }
    const std::int64_t when = launch ? launch->start_ns : op.start_ns;
    auto s = std::upper_bound(steps.begin(), steps.end(), when,
                              [](std::int64_t x, const ProfilerStep& st) { return x < st.start_ns; });
    if (s != steps.begin() && when < std::prev(s)->end_ns) c.step = std::prev(s)->number;
    else c.step = steps.empty() ? 0 : INT64_MIN;
    c.sequence = ordinal_in_step[c.step]++;
    return c;
}

// Copies, kernels and collectives of the ops that start in the window.
void tally_ops(const TraceTables& t, const std::vector<GpuOp>& ops, const std::vector<ProfilerStep>& steps,
               const LaunchIndex& launches, std::size_t top_kernel_count, RankAnalysis& r) {
    std::unordered_map<std::uint32_t, KernelTotal> by_name;
    std::int64_t kernel_ns_total = 0;
    const std::int64_t base = t.base_time_ns.value_or(0);
    std::map<std::int64_t, std::int64_t> ordinal_in_step;
    for (auto& op : ops) {
        if (op.start_ns < r.window_start_ns || op.start_ns >= r.window_end_ns) continue;
        const RuntimeCall* launch = launches.launch_for(op);
        if (launch) ++r.launches_joined;
        else ++r.launches_missing;
        if (op.kind == GpuOpKind::memcpy) add_copy(op, r.memcpy);
        if (op.kind != GpuOpKind::kernel) continue;
        const std::int64_t dur = op.end_ns - op.start_ns;
        auto& k = by_name[op.name_id];
        ++k.count;
        k.seconds += dur / kNsPerSecond;
        kernel_ns_total += dur;
        if (!op.is_communication) continue;
        const CollectiveStart c = collective_start(op, launch, steps, base, ordinal_in_step);
        if (c.step != INT64_MIN) r.collectives.push_back(c);
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
}

}  // namespace

RankAnalysis analyse_rank(const TraceTables& t, std::int64_t fallback_rank, std::size_t top_kernel_count) {
    RankAnalysis r;
    r.rank = t.rank.value_or(fallback_rank);
    if (t.gpu_ops.empty())
        throw InputError("", "traceEvents",
                         "no GPU kernels, copies or memsets: was the profiler run with ProfilerActivity.CUDA?");
    r.device = busiest_device(t, r);
    const std::vector<GpuOp> ops = ops_on_device(t, r.device);
    std::vector<ProfilerStep> steps = t.steps;
    std::sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
    set_window(t, steps, r);

    const BusySweep busy = sweep_busy(ops, r.window_start_ns, r.window_end_ns);
    const double window_ns = static_cast<double>(r.window_end_ns - r.window_start_ns);
    r.gpu.compute = busy.compute_ns / window_ns;
    r.gpu.communication = busy.comm_only_ns / window_ns;
    r.gpu.memcpy = busy.copy_only_ns / window_ns;
    r.gpu.idle = busy.idle_ns / window_ns;
    r.communication_seconds = busy.comm_any_ns / kNsPerSecond;
    r.comm_compute_overlap = busy.comm_any_ns > 0 ? static_cast<double>(busy.comm_and_compute_ns) / busy.comm_any_ns : 0.0;

    const LaunchIndex launches(t);
    split_idle(busy.gaps, ops, launches, merge_ranges(t.dataloader_ranges), window_ns, r);
    tally_ops(t, ops, steps, launches, top_kernel_count, r);
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

namespace {

// The ranks' fractions averaged, their copy bytes and peaks summed or maxed, every step and warning kept.
void combine_ranks(const std::vector<RankAnalysis>& per_rank, Diagnosis& d) {
    const double n = static_cast<double>(per_rank.size());
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
}

// Top kernels over all ranks, merged from each rank's list (a kernel outside a rank's top list is missing from
// that rank's sum: exact for the kernels that lead everywhere, which are the ones shown).
std::vector<KernelTotal> merge_top_kernels(const std::vector<RankAnalysis>& per_rank, std::size_t top_kernel_count) {
    std::map<std::string, KernelTotal> kernels;
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
    std::vector<KernelTotal> top;
    for (auto& [name, k] : kernels) top.push_back(k);
    std::sort(top.begin(), top.end(), [](auto& a, auto& b) {
        return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
    });
    if (top.size() > top_kernel_count) top.resize(top_kernel_count);
    for (auto& k : top) k.share = total_kernel_seconds > 0 ? k.seconds / total_kernel_seconds : 0.0;
    return top;
}

// Mean spread (slowest minus fastest) of the steps every rank recorded; none when no step is common.
std::optional<double> mean_step_skew_seconds(const std::vector<RankAnalysis>& per_rank) {
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
    if (common == 0) return std::nullopt;
    return skew_sum / common;
}

// The rank that starts the collectives every rank ran latest, on average.
std::optional<Straggler> find_straggler(const std::vector<RankAnalysis>& per_rank) {
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
    if (matched == 0) return std::nullopt;
    const auto worst = static_cast<std::size_t>(std::max_element(lateness.begin(), lateness.end()) - lateness.begin());
    Straggler s;
    s.rank = per_rank[worst].rank;
    s.mean_lateness_seconds = lateness[worst] / matched;
    s.collectives_matched = matched;
    return s;
}

struct Loss {
    std::string resource;
    double share;
    std::string evidence;
};

// What the GPU loses its time to, each with the resource it points at and the evidence for it.
std::vector<Loss> losses(const Diagnosis& d, const std::vector<const TraceTables*>& tables) {
    std::vector<Loss> out;
    const double idle = d.gpu.idle;
    const double hw = d.idle.host_wait;
    const bool loader = hw > 0 && d.idle.host_wait_in_dataloader >= 0.5 * hw;
    std::string ev = fmt::format("GPU idle {} of the window, {} of it waiting for the host to launch work", percent(idle),
                                 percent(idle > 0 ? hw / idle : 0));
    if (loader) ev += fmt::format(", {} of that while the DataLoader ran", percent(d.idle.host_wait_in_dataloader / hw));
    else ev += " (not while a DataLoader ran: host-side Python/CPU work)";
    out.push_back({loader ? "data_loading" : "host_cpu", hw, ev});
    out.push_back({"launch_overhead", d.idle.kernel_wait,
                   fmt::format("GPU idle {} of the window in gaps under {} us between ops already launched",
                               percent(d.idle.kernel_wait), kKernelWaitThresholdNs / 1000)});
    out.push_back({"idle", d.idle.other,
                   fmt::format("GPU idle {} of the window with the next op already launched and no host cause "
                               "(synchronisation or waits on events)",
                               percent(d.idle.other))});
    out.push_back({communication_resource(tables), d.gpu.communication,
                   fmt::format("communication kernels run exposed (no compute beside them) {} of the window; "
                               "{} of communication time is hidden under compute",
                               percent(d.gpu.communication), percent(d.comm_compute_overlap))});
    const bool host_copies = d.memcpy.h2d_bytes + d.memcpy.d2h_bytes >= d.memcpy.d2d_bytes;
    out.push_back({host_copies ? "pcie" : "memory_bandwidth", d.gpu.memcpy,
                   fmt::format("copies and memsets run alone {} of the window (H2D {:.1f} GB/s, D2H {:.1f} GB/s, "
                               "{} of host copy bytes pageable)",
                               percent(d.gpu.memcpy), d.memcpy.h2d_GBps(), d.memcpy.d2h_GBps(),
                               percent(d.memcpy.pageable_fraction()))});
    return out;
}

// Bottleneck: the largest loss when it is large (or larger than compute), else compute.
Bottleneck choose_bottleneck(const Diagnosis& d, const std::vector<const TraceTables*>& tables) {
    const std::vector<Loss> all = losses(d, tables);
    auto largest = std::max_element(all.begin(), all.end(), [](auto& a, auto& b) { return a.share < b.share; });
    if (largest->share > 0 && (largest->share >= kLargeLossShare || largest->share >= d.gpu.compute))
        return {largest->resource, largest->share, largest->evidence + ": " + largest->resource};
    return {"compute", d.gpu.compute,
            fmt::format("compute kernels run {} of the window; the largest loss ({}) is {}: compute",
                        percent(d.gpu.compute), largest->resource, percent(largest->share))};
}

}  // namespace

Diagnosis diagnose(const std::vector<const TraceTables*>& tables, std::vector<RankAnalysis> per_rank,
                   std::size_t top_kernel_count) {
    FTB_ASSERT(!per_rank.empty() && per_rank.size() == tables.size());
    Diagnosis d;
    combine_ranks(per_rank, d);
    d.top_kernels = merge_top_kernels(per_rank, top_kernel_count);
    if (per_rank.size() >= 2) {
        d.step_skew_seconds = mean_step_skew_seconds(per_rank);
        d.straggler = find_straggler(per_rank);
    }
    d.bottleneck = choose_bottleneck(d, tables);
    d.ranks = std::move(per_rank);
    return d;
}

}  // namespace ftb::trace
