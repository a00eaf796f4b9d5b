#include "search/pareto.hpp"

#include <algorithm>

namespace ftb {

bool ParetoFront::offer(const Candidate& c) {
    for (const Candidate& m : members_)
        if (dominates(m, c)) return false;
    std::erase_if(members_, [&](const Candidate& m) { return dominates(c, m); });
    members_.push_back(c);
    return true;
}

std::vector<Candidate> ParetoFront::sorted_by_time() const {
    std::vector<Candidate> v = members_;
    std::sort(v.begin(), v.end(), [](const Candidate& a, const Candidate& b) { return better(a, b, Objective::time); });
    return v;
}

}  // namespace ftb
