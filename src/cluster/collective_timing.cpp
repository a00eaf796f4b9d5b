#include "cluster/collective_timing.hpp"

#include <algorithm>

#include "probe/probe_types.hpp"

namespace ftb::cluster {

const char* collective_name(Collective op) {
    switch (op) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::all_gather: return "all_gather";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_to_all: return "all_to_all";
        case Collective::broadcast: return "broadcast";
        case Collective::send_recv: return "send_recv";
    }
    return "?";
}

std::optional<Collective> collective_named(const std::string& name) {
    for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                          Collective::all_to_all, Collective::broadcast, Collective::send_recv})
        if (name == collective_name(op)) return op;
    return std::nullopt;
}

double algbw_GBps(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0.0; }

double busbw_GBps(Collective op, int ranks, double bytes, double seconds) {
    return algbw_GBps(bytes, seconds) * busbw_factor(op, ranks);
}

double CollectiveFigure::median_seconds() const { return probe::measurement_of(seconds).median(); }
double CollectiveFigure::algbw_GBps() const { return cluster::algbw_GBps(bytes, median_seconds()); }
double CollectiveFigure::busbw_GBps() const { return cluster::busbw_GBps(op, ranks, bytes, median_seconds()); }

std::vector<double> CollectiveFigure::busbw_samples_GBps() const {
    std::vector<double> v;
    for (double s : seconds) v.push_back(cluster::busbw_GBps(op, ranks, bytes, s));
    return v;
}

CollectiveFigure collective_figure(Collective op, double bytes, const std::vector<std::vector<double>>& per_rank) {
    CollectiveFigure f;
    f.op = op;
    f.bytes = bytes;
    f.ranks = static_cast<int>(per_rank.size());
    size_t samples = per_rank.empty() ? 0 : per_rank.front().size();
    for (const auto& r : per_rank) samples = std::min(samples, r.size());
    for (size_t s = 0; s < samples; ++s) {
        double sum = 0;
        for (const auto& r : per_rank) sum += r[s];
        f.seconds.push_back(sum / static_cast<double>(per_rank.size()));
    }
    return f;
}

}  // namespace ftb::cluster
