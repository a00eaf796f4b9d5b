#include "search/candidate.hpp"

#include <algorithm>
#include <array>

namespace ftb {

const char* to_string(Objective o) {
    switch (o) {
        case Objective::time: return "time";
        case Objective::cost: return "cost";
        case Objective::energy: return "energy";
    }
    return "?";
}

namespace {

double cost_axis(const Metrics& m) { return m.cost ? *m.cost : m.gpu_hours; }

std::array<double, 3> axes(const Metrics& m, Objective first) {
    switch (first) {
        case Objective::time: return {m.time_seconds, cost_axis(m), m.energy_kwh};
        case Objective::cost: return {cost_axis(m), m.time_seconds, m.energy_kwh};
        case Objective::energy: return {m.energy_kwh, m.time_seconds, cost_axis(m)};
    }
    return {};
}

}  // namespace

double objective_value(const Metrics& m, Objective o) { return axes(m, o)[0]; }

bool better(const Candidate& a, const Candidate& b, Objective o) {
    const auto x = axes(a.metrics, o), y = axes(b.metrics, o);
    if (x != y) return x < y;
    return a.layout < b.layout;
}

bool dominates(const Candidate& a, const Candidate& b) {
    const auto x = axes(a.metrics, Objective::time), y = axes(b.metrics, Objective::time);
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] > y[i]) return false;
    if (x != y) return true;
    return a.layout < b.layout;   // identical figures: one representative, the same one every run
}

double memory_overshoot(const Metrics& m) {
    const double gpu = m.capacity_bytes > 0 ? m.device_used_bytes / m.capacity_bytes : 0;
    const double host = m.host_capacity_bytes > 0 ? m.host_bytes / m.host_capacity_bytes : 0;
    return std::max(gpu, host);
}

}  // namespace ftb
