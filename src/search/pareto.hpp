// The Pareto front of time vs cost (GPU-hours when no price is known) vs energy: the configurations that no
// other one beats on all three. Ties (identical figures) keep one representative, by the layout order.
#pragma once
#include <vector>

#include "search/candidate.hpp"

namespace ftb {

class ParetoFront {
public:
    // Adds `c` unless a member dominates it; drops the members it dominates. Returns whether it was added.
    bool offer(const Candidate& c);
    const std::vector<Candidate>& members() const { return members_; }
    std::vector<Candidate> sorted_by_time() const;   // fastest first

private:
    std::vector<Candidate> members_;
};

}  // namespace ftb
