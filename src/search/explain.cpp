#include "search/explain.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "report/table.hpp"
#include "search/layout.hpp"

namespace ftb {
namespace {

std::array<double, kResourceCount> seconds_by_resource(const TimeResult& t) {
    std::array<double, kResourceCount> s{};
    for (const StepPhase& p : t.breakdown) s[size_t(p.resource)] += p.seconds;
    return s;
}

// The margin on the objective, in words.
std::string margin(const Metrics& a, const Metrics& b, Objective o, int next_rank) {
    switch (o) {
        case Objective::time: {
            const double ratio = b.time_seconds / a.time_seconds;
            return ratio >= 1.01 ? fmt::format("{:.3g}x faster than #{}", ratio, next_rank)
                                 : fmt::format("{:.2g}% faster than #{}", 100 * (ratio - 1), next_rank);
        }
        case Objective::cost:
            if (a.cost && b.cost)
                return fmt::format("{:.1f}% cheaper than #{}", 100 * (1 - *a.cost / *b.cost), next_rank);
            return fmt::format("{:.1f}% fewer GPU-hours than #{}", 100 * (1 - a.gpu_hours / b.gpu_hours), next_rank);
        case Objective::energy:
            return fmt::format("{:.1f}% less energy than #{}", 100 * (1 - a.energy_kwh / b.energy_kwh), next_rank);
    }
    return {};
}

// What differs, from the next one's point of view: "parallel.pp 8 instead of 16, train.micro_batch 2 instead of 1".
std::string differences(const Explained& a, const Explained& b) {
    const auto to_a = layout_changes(b.candidate.layout, a.candidate.layout, a.system);
    const auto to_b = layout_changes(a.candidate.layout, b.candidate.layout, b.system);
    std::string out;
    for (size_t i = 0; i < to_a.size() && i < 3; ++i) {
        std::string other;
        for (const auto& [k, v] : to_b)
            if (k == to_a[i].first) other = v;
        out += fmt::format("{}{} {} instead of {}", out.empty() ? "" : ", ", to_a[i].first, to_a[i].second, other);
    }
    if (to_a.size() > 3) out += fmt::format(" and {} more", to_a.size() - 3);
    return out.empty() ? "the same layout" : out;
}

}  // namespace

std::string reason_over(const Explained& a, const Explained& b, int next_rank, Objective objective) {
    std::string s = margin(a.candidate.metrics, b.candidate.metrics, objective, next_rank) + " (" + differences(a, b) + ")";
    const auto sa = seconds_by_resource(a.time), sb = seconds_by_resource(b.time);
    int most = -1;
    double gain = 0;
    for (int r = 0; r < kResourceCount; ++r)
        if (sb[size_t(r)] - sa[size_t(r)] > gain) gain = sb[size_t(r)] - sa[size_t(r)], most = r;
    if (objective == Objective::time && most >= 0)
        s += fmt::format(": {} less {} per step", fmt_seconds(gain), to_string(Resource(most)));
    if (objective != Objective::time && a.candidate.metrics.gpus != b.candidate.metrics.gpus)
        s += fmt::format(": {} GPUs instead of {}", a.candidate.metrics.gpus, b.candidate.metrics.gpus);
    return s;
}

}  // namespace ftb
