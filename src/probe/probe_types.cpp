#include "probe/probe_types.hpp"

#include <algorithm>

namespace ftb::probe {

double Measurement::median() const {
    if (samples.empty()) return 0;
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    size_t mid = s.size() / 2;
    return s.size() % 2 ? s[mid] : 0.5 * (s[mid - 1] + s[mid]);
}

double Measurement::relative_spread() const {
    if (samples.size() < 2) return 0;
    auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    const double m = median();
    return m > 0 ? (*hi - *lo) / m : 0.0;
}

Measurement measurement_of(std::vector<double> samples) {
    Measurement m;
    m.samples = std::move(samples);
    return m;
}

}  // namespace ftb::probe
