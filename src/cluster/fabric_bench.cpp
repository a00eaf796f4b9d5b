#include "cluster/fabric_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "cluster/collective_timing.hpp"
#include "ftbound/error.hpp"

namespace ftb::cluster {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Message tags of a tier's pair tests (control messages use tags below 10).
struct Tags {
    int latency, data, ack;
};
Tags tags_of(const std::string& tier) { return tier == "intra_node" ? Tags{20, 21, 22} : Tags{30, 31, 32}; }

void pause_before_send(double delay_us) {
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(delay_us));
}

const char* wait_text(Wait w) { return w == Wait::timeout ? "timed out" : "failed"; }

void send(Transport& t, const FabricPlan& plan, double delay_us, int to, int tag, const void* data, size_t n, const char* what) {
    pause_before_send(delay_us);
    if (Wait w = t.send_data(to, tag, data, n, plan.timeout_s, true); w != Wait::ok)
        throw FabricStop{fmt::format("{} send to rank {} {} ({:.0f} s)", what, to, wait_text(w), plan.timeout_s)};
}

void recv(Transport& t, const FabricPlan& plan, int from, int tag, void* data, size_t n, const char* what) {
    if (Wait w = t.recv_data(from, tag, data, n, plan.timeout_s, true); w != Wait::ok)
        throw FabricStop{fmt::format("{} from rank {} {} ({:.0f} s)", what, from, wait_text(w), plan.timeout_s)};
}

// nccl-tests' size S rounded to whole floats per rank.
double rounded_bytes(double bytes, int ranks) {
    const double unit = 4.0 * ranks;
    return std::max(unit, std::floor(bytes / unit) * unit);
}

std::vector<int> ring_of(const Layout& layout, const std::string& tier, size_t place_or_host) {
    if (tier == "intra_node") return layout.ranks_of_host[place_or_host];
    std::vector<int> ring;
    for (const auto& ranks : layout.ranks_of_host)
        if (ranks.size() > place_or_host) ring.push_back(ranks[place_or_host]);
    return ring;
}

}  // namespace

int Layout::host_of(int rank) const {
    for (size_t h = 0; h < ranks_of_host.size(); ++h)
        if (std::find(ranks_of_host[h].begin(), ranks_of_host[h].end(), rank) != ranks_of_host[h].end())
            return static_cast<int>(h);
    return -1;
}

PairSamples measure_send(Transport& t, const FabricPlan& plan, const std::string& tier, int to, double delay_us) {
    const Tags tags = tags_of(tier);
    std::vector<char> buf(static_cast<size_t>(plan.p2p_bytes), 1);
    PairSamples p;
    p.tier = tier;
    p.src = t.rank();
    p.dst = to;
    char word[8] = {0};
    for (int s = -1; s < plan.samples; ++s) {  // s = -1: warm-up
        const auto t0 = Clock::now();
        for (int i = 0; i < plan.latency_reps; ++i) {
            send(t, plan, delay_us, to, tags.latency, word, sizeof word, "latency");
            recv(t, plan, to, tags.latency, word, sizeof word, "latency echo");
        }
        if (s >= 0) p.latency_us.push_back(seconds_since(t0) / plan.latency_reps / 2 * 1e6);
    }
    for (int s = -1; s < plan.samples; ++s) {
        for (int i = 0; i < plan.p2p_reps; ++i) send(t, plan, delay_us, to, tags.data, buf.data(), buf.size(), "bandwidth");
        recv(t, plan, to, tags.ack, word, 1, "bandwidth acknowledgement");
    }
    return p;
}

std::vector<double> answer_send(Transport& t, const FabricPlan& plan, const std::string& tier, int from, double delay_us) {
    const Tags tags = tags_of(tier);
    std::vector<char> buf(static_cast<size_t>(plan.p2p_bytes), 0);
    char word[8] = {0};
    for (int s = -1; s < plan.samples; ++s)
        for (int i = 0; i < plan.latency_reps; ++i) {
            recv(t, plan, from, tags.latency, word, sizeof word, "latency");
            send(t, plan, delay_us, from, tags.latency, word, sizeof word, "latency echo");
        }
    std::vector<double> GBps;
    for (int s = -1; s < plan.samples; ++s) {  // s = -1: warm-up
        recv(t, plan, from, tags.data, buf.data(), buf.size(), "bandwidth");
        const auto first = Clock::now();
        for (int i = 1; i < plan.p2p_reps; ++i) recv(t, plan, from, tags.data, buf.data(), buf.size(), "bandwidth");
        if (s >= 0) GBps.push_back((plan.p2p_reps - 1) * plan.p2p_bytes / seconds_since(first) / 1e9);
        send(t, plan, delay_us, from, tags.ack, word, 1, "bandwidth acknowledgement");
    }
    return GBps;
}

std::vector<CollectiveSamples> measure_collectives(Transport& t, const FabricPlan& plan, int ranks, double delay_us,
                                                   std::string& stopped) {
    std::vector<CollectiveSamples> out;
    if (ranks < 2) return out;
    double largest = 0;
    for (double b : plan.collective_bytes) largest = std::max(largest, rounded_bytes(b, ranks));
    std::vector<float> send_buf(static_cast<size_t>(largest / 4), 1.0f), recv_buf(send_buf.size(), 0.0f);
    try {
        for (Collective op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::all_to_all})
            for (double requested : plan.collective_bytes) {
                CollectiveSamples c;
                c.op = op;
                c.bytes = rounded_bytes(requested, ranks);
                for (int s = -1; s < plan.samples; ++s) {
                    if (Wait w = t.barrier(plan.timeout_s); w != Wait::ok)
                        throw FabricStop{fmt::format("barrier before {} {}", collective_name(op), wait_text(w))};
                    const auto t0 = Clock::now();
                    for (int i = 0; i < plan.collective_reps; ++i) {
                        pause_before_send(delay_us);
                        if (Wait w = t.collective(op, send_buf.data(), recv_buf.data(), static_cast<size_t>(c.bytes), plan.timeout_s);
                            w != Wait::ok)
                            throw FabricStop{fmt::format("{} of {:.0f} bytes {} ({:.0f} s)", collective_name(op), c.bytes,
                                                         wait_text(w), plan.timeout_s)};
                    }
                    if (s >= 0) c.seconds.push_back(seconds_since(t0) / plan.collective_reps);
                }
                out.push_back(std::move(c));
            }
    } catch (const FabricStop& s) {
        stopped = s.why;
    }
    return out;
}

std::vector<PairTest> pair_schedule(const Layout& layout) {
    std::vector<PairTest> tests;
    auto add_rings = [&](const std::string& tier, size_t rings) {
        for (size_t r = 0; r < rings; ++r) {
            const std::vector<int> ring = ring_of(layout, tier, r);
            if (ring.size() < 2) continue;
            for (size_t i = 0; i < ring.size(); ++i) tests.push_back({tier, ring[i], ring[(i + 1) % ring.size()]});
        }
    };
    size_t places = 0;
    for (const auto& ranks : layout.ranks_of_host) places = std::max(places, ranks.size());
    add_rings("intra_node", layout.ranks_of_host.size());
    add_rings("inter_node", places);
    return tests;
}

nlohmann::json to_json(const PairSamples& p) {
    return {{"tier", p.tier}, {"src", p.src}, {"dst", p.dst}, {"GBps", p.GBps}, {"latency_us", p.latency_us}};
}

PairSamples pair_samples_from_json(const nlohmann::json& j) {
    return {j.at("tier").get<std::string>(), j.at("src").get<int>(), j.at("dst").get<int>(),
            j.at("GBps").get<std::vector<double>>(), j.at("latency_us").get<std::vector<double>>()};
}

nlohmann::json to_json(const CollectiveSamples& c) {
    return {{"op", collective_name(c.op)}, {"bytes", c.bytes}, {"seconds", c.seconds}};
}

CollectiveSamples collective_samples_from_json(const nlohmann::json& j) {
    const auto op = collective_named(j.at("op").get<std::string>());
    if (!op) throw InternalError("a rank reported an unknown collective");
    return {*op, j.at("bytes").get<double>(), j.at("seconds").get<std::vector<double>>()};
}

nlohmann::json to_json(const FabricPlan& p) {
    return {{"collective_bytes", p.collective_bytes}, {"collective_reps", p.collective_reps}, {"samples", p.samples},
            {"p2p_bytes", p.p2p_bytes}, {"p2p_reps", p.p2p_reps}, {"latency_reps", p.latency_reps},
            {"timeout_s", p.timeout_s}};
}

FabricPlan fabric_plan_from_json(const nlohmann::json& j) {
    FabricPlan p;
    p.collective_bytes = j.at("collective_bytes").get<std::vector<double>>();
    p.collective_reps = j.at("collective_reps").get<int>();
    p.samples = j.at("samples").get<int>();
    p.p2p_bytes = j.at("p2p_bytes").get<double>();
    p.p2p_reps = j.at("p2p_reps").get<int>();
    p.latency_reps = j.at("latency_reps").get<int>();
    p.timeout_s = j.at("timeout_s").get<double>();
    return p;
}

}  // namespace ftb::cluster
