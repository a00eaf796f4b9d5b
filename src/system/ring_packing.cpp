#include "system/ring_packing.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>

#include "ftbound/error.hpp"
#include "system/topology.hpp"

namespace ftb {
namespace {

// The first ring's width is handed out in this many quanta: small enough that channels spread evenly
// over equally good orders (a 4-GPU mesh ends within 1/32 of a link of its optimum), few enough that
// packing an 8-GPU mesh stays under a millisecond.
constexpr int kQuantaPerRing = 32;
constexpr int kMaxRounds = 64 * kQuantaPerRing;

int direction_index(LinkDirection d) { return 2 * d.link + (d.a_to_b ? 0 : 1); }

bool nvlink_class(const LinkSpec& link) { return is_nvlink(link) || link.name.rfind("xgmi", 0) == 0; }

struct Order {
    std::vector<int> gpus;  // local ranks, starting at 0
    double width_GBps = 0;  // the most this order can still carry
    double fresh_GBps = 0;  // tie-break: capacity left on its hops, summed (later channels avoid used links)
};

// Widest ring over the residual capacities: depth-first over GPU orders starting at rank 0, pruning a
// partial order once it is narrower than the best complete one. Among equally wide orders the one over
// the least used links wins, so channels spread over every link the fabric offers.
class WidestRing {
public:
    WidestRing(const std::vector<std::vector<std::vector<int>>>& arcs, const std::vector<double>& residual)
        : arcs_(arcs), residual_(residual), uses_(residual.size(), 0), n_(static_cast<int>(arcs.size())) {}

    Order search(bool exhaustive) {
        best_ = {};
        if (!exhaustive) {
            std::vector<int> natural(n_);
            std::iota(natural.begin(), natural.end(), 0);
            std::vector<int> reverse{0};
            for (int g = n_ - 1; g > 0; --g) reverse.push_back(g);
            consider(natural);
            consider(reverse);
            return best_;
        }
        order_.assign(1, 0);
        visited_.assign(n_, false);
        visited_[0] = true;
        widest_hop_fresh_ = 0;
        for (int a = 0; a < n_; ++a)
            for (int b = 0; b < n_; ++b)
                if (a != b) widest_hop_fresh_ = std::max(widest_hop_fresh_, fresh(a, b));
        extend(std::numeric_limits<double>::infinity(), 0);
        return best_;
    }

private:
    static constexpr double kTie = 1e-9;

    double add_arc(int from, int to, double width) {
        for (int d : arcs_[from][to]) width = std::min(width, residual_[d] / ++uses_[d]);
        return width;
    }
    void remove_arc(int from, int to) {
        for (int d : arcs_[from][to]) --uses_[d];
    }
    double fresh(int from, int to) const {
        double f = std::numeric_limits<double>::infinity();
        for (int d : arcs_[from][to]) f = std::min(f, residual_[d]);
        return f;
    }
    bool could_win(double width) const { return width > 0 && width >= best_.width_GBps * (1 - kTie); }
    // A partial order of `width` whose hops so far have `fresh_GBps` left, with `hops_left` hops to close the ring,
    // cannot replace the best order when it cannot be wider (a ring only narrows as hops join) and even the freshest
    // hops left would not beat the best's freshness. The bound adds the widest hop once per hop left, in the order
    // the ring's own sum would add them: rounding is monotone, so the bound is never below that sum. On an NVSwitch,
    // where every order ties, this cuts the search from every order (7! for 8 GPUs) to one path per round.
    bool cannot_beat(double width, double fresh_GBps, int hops_left) const {
        if (width > best_.width_GBps * (1 + kTie)) return false;
        double bound = fresh_GBps;
        for (int h = 0; h < hops_left; ++h) bound += widest_hop_fresh_;
        return bound <= best_.fresh_GBps;
    }
    void offer(const std::vector<int>& order, double width, double fresh_GBps) {
        const bool wider = width > best_.width_GBps * (1 + kTie);
        if (could_win(width) && (wider || fresh_GBps > best_.fresh_GBps)) best_ = {order, width, fresh_GBps};
    }

    void consider(const std::vector<int>& order) {
        double width = std::numeric_limits<double>::infinity(), fresh_GBps = 0;
        for (int k = 0; k < n_; ++k) {
            fresh_GBps += fresh(order[k], order[(k + 1) % n_]);
            width = add_arc(order[k], order[(k + 1) % n_], width);
        }
        for (int k = 0; k < n_; ++k) remove_arc(order[k], order[(k + 1) % n_]);
        offer(order, width, fresh_GBps);
    }

    void extend(double width, double fresh_GBps) {
        const int last = order_.back();
        if (static_cast<int>(order_.size()) == n_) {
            offer(order_, add_arc(last, 0, width), fresh_GBps + fresh(last, 0));
            remove_arc(last, 0);
            return;
        }
        for (int g = 1; g < n_; ++g) {
            if (visited_[g]) continue;
            const double w = add_arc(last, g, width);
            const double f = fresh_GBps + fresh(last, g);
            const int hops_left = n_ - static_cast<int>(order_.size());   // after g joins: to the GPUs left, then home
            if (could_win(w) && !cannot_beat(w, f, hops_left)) {
                visited_[g] = true;
                order_.push_back(g);
                extend(w, f);
                order_.pop_back();
                visited_[g] = false;
            }
            remove_arc(last, g);
        }
    }

    const std::vector<std::vector<std::vector<int>>>& arcs_;  // [from][to] -> link directions of the route
    const std::vector<double>& residual_;                     // GB/s left per link direction
    std::vector<int> uses_;                                   // times the current order crosses a direction
    int n_;
    std::vector<int> order_;
    std::vector<bool> visited_;
    Order best_;
    double widest_hop_fresh_ = 0;   // the most any hop has left this search (the freshness bound's step)
};

// A system's GPU fabric as a byte string: the packing depends on nothing else, so plans of the same fabric (every
// re-planned change of a job, every row of a search) share one packing. Numbers go in as their bytes (formatting
// doubles as text cost a third of a plan), strings with their length in front.
template <typename T>
void append_bytes(std::string& key, const T& value) {
    key.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void append_text(std::string& key, const std::string& text) {
    append_bytes(key, text.size());
    key += text;
}

std::string fabric_key(const SystemSpec& system, int ranks) {
    std::string key;
    append_bytes(key, ranks);
    append_bytes(key, system.components.size());
    for (const Component& c : system.components) append_text(key, c.id), append_bytes(key, int(c.kind));
    for (const TopologyLink& l : system.links) {
        append_bytes(key, l.a), append_bytes(key, l.b);
        append_text(key, l.link.name);
        append_bytes(key, l.link.bandwidth_GBps * l.link.achievable_fraction);
    }
    return key;
}

RingPacking compute_packing(const SystemSpec& system, int ranks);

}  // namespace

RingPacking pack_rings(const SystemSpec& system, int ranks) {
    static std::mutex mutex;
    static std::map<std::string, RingPacking> memo;
    const std::string key = fabric_key(system, ranks);
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = memo.find(key); it != memo.end()) return it->second;
    }
    RingPacking packing = compute_packing(system, ranks);
    std::lock_guard<std::mutex> lock(mutex);
    return memo.emplace(key, std::move(packing)).first->second;
}

namespace {

RingPacking compute_packing(const SystemSpec& system, int ranks) {
    if (ranks < 2) throw InputError(system.name, "parallel", "a ring needs at least two GPUs");
    const Topology topo(system);
    std::vector<int> gpus(ranks);
    for (int r = 0; r < ranks; ++r) {
        gpus[r] = topo.gpu(r);
        if (gpus[r] < 0)
            throw InputError(system.name, "components",
                             "GPU components gpu0..gpu" + std::to_string(ranks - 1) + " are needed for a group of " +
                                 std::to_string(ranks));
    }
    // The route of every hop, as link directions.
    std::vector<std::vector<std::vector<int>>> arcs(ranks, std::vector<std::vector<int>>(ranks));
    std::vector<std::vector<Route>> routes(ranks, std::vector<Route>(ranks));
    for (int a = 0; a < ranks; ++a)
        for (int b = 0; b < ranks; ++b) {
            if (a == b) continue;
            routes[a][b] = topo.route(gpus[a], gpus[b]);
            for (const LinkDirection& hop : routes[a][b].hops) arcs[a][b].push_back(direction_index(hop));
        }
    std::vector<double> residual(2 * system.links.size());
    for (size_t d = 0; d < residual.size(); ++d) residual[d] = topo.capacity_GBps({int(d / 2), d % 2 == 0});

    RingPacking out;
    WidestRing widest(arcs, residual);
    const bool exhaustive = ranks <= kMaxSearchedRanks;
    const Order first = widest.search(exhaustive);
    const double quantum = first.width_GBps / kQuantaPerRing;
    std::set<std::vector<int>> orders;
    for (int round = 0; round < kMaxRounds; ++round) {
        const Order best = widest.search(exhaustive);
        if (best.gpus.empty() || best.width_GBps <= quantum * 1e-6) break;
        const double amount = std::min(best.width_GBps, quantum);
        for (int k = 0; k < ranks; ++k)
            for (int d : arcs[best.gpus[k]][best.gpus[(k + 1) % ranks]]) residual[d] = std::max(0.0, residual[d] - amount);
        out.bus_GBps += amount;
        orders.insert(best.gpus);
    }
    out.orders_used = static_cast<int>(orders.size());
    std::set<int> links;
    for (const auto& order : orders)
        for (int k = 0; k < ranks; ++k) {
            const Route& r = routes[order[k]][order[(k + 1) % ranks]];
            for (const LinkDirection& hop : r.hops) {
                links.insert(hop.link);
                if (!nvlink_class(system.links[hop.link].link)) out.nvlink_only = false;
            }
            for (int c : r.components)
                if (system.components[c].kind == ComponentKind::nvswitch) out.through_nvswitch = true;
        }
    out.links_used.assign(links.begin(), links.end());
    return out;
}

}  // namespace
}  // namespace ftb
