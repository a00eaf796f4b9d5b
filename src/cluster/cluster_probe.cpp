#include "cluster/cluster_probe.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "cluster/cluster_analysis.hpp"
#include "cluster/cluster_file.hpp"
#include "cluster/nccl_transport.hpp"
#include "ftbound/error.hpp"

namespace ftb::cluster {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Control message tags (the pair tests use 20 and above).
constexpr int kTagNode = 1, kTagCommand = 2, kTagReport = 3;

std::string hostname() {
    char host[256] = {0};
    return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("unknown-host");
}

double seconds_left(Clock::time_point deadline) {
    return std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

Clock::time_point after(double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The device buffers the NCCL transport needs: the largest collective or point-to-point message.
std::size_t fabric_bytes(const FabricPlan& p) {
    double b = p.p2p_bytes;
    for (double c : p.collective_bytes) b = std::max(b, c);
    return static_cast<std::size_t>(b);
}

// The GPU fabric for this rank, over the group; why not, when it cannot start.
std::unique_ptr<Transport> start_nccl(Transport& control, const LaunchInfo& launch, const FabricPlan& plan,
                                      const std::vector<int>& group, std::string& why) {
    std::unique_ptr<Transport> nccl = open_nccl_transport(control, launch.local_rank, fabric_bytes(plan), why);
    if (nccl && nccl->use_group(group) != Wait::ok) {
        why = "the NCCL communicator did not start (every rank must join it within 60 s)";
        nccl.reset();
    }
    return nccl;
}

// How long a node measurement may take: the probe takes seconds to a few minutes (every GPU's copies and GEMMs);
// past this, a rank waiting for rank 0 takes it for hung.
double node_allowance(const ClusterProbeOptions& o) { return o.node.quick ? 120 : 600; }

// This node's measurement (local rank 0 only): the probe's JSON document and system file, or why it failed.
json measure_node(const ClusterProbeOptions& o, const LaunchInfo& launch, const std::string& host, int rank) {
    json m = {{"rank", rank}, {"host", host}, {"local_rank", launch.local_rank}, {"pid", static_cast<long>(::getpid())}};
    if (launch.local_rank != 0) return m;
    try {
        const probe::ProbeReport r = probe::run_probe(o.node);
        m["probe"] = probe::to_json(r);
        m["system_yaml"] = probe::to_system_yaml(r);
    } catch (const std::exception& e) {
        m["error"] = e.what();
    }
    return m;
}

// The control transport's group and, when the fabric is NCCL's, its communicator: both over `group`.
bool regrouped(Transport& control, Transport& fabric, const std::vector<int>& group) {
    if (control.use_group(group) != Wait::ok) return false;
    return &fabric == &control || fabric.use_group(group) == Wait::ok;
}

// Rank 0's side of the run: what it learnt, and the ranks it gave up on.
class Coordinator {
public:
    Coordinator(const ClusterProbeOptions& o, const LaunchInfo& launch, Transport& t) : o_(o), launch_(launch), t_(t) {}

    ClusterProbeOutcome run() {
        const std::string host = hostname();
        accept_node(measure_node(o_, launch_, host, 0));
        roll_call();
        choose_fabric();
        direct_pair_tests();
        direct_collectives();
        const json end = {{"do", "end"}, {"failed", !in_.failures.empty()}};
        for (int r : alive_)
            if (r != 0) t_.send(r, kTagCommand, end.dump(), o_.plan.timeout_s);
        return outcome();
    }

private:
    void accept_node(const json& m) {
        const int rank = m.at("rank").get<int>();
        hosts_[rank] = m.at("host").get<std::string>();
        alive_.insert(rank);
        if (m.contains("error"))
            in_.failures.push_back({rank, hosts_[rank], "node measurement", m.at("error").get<std::string>()});
        else if (m.contains("probe"))
            in_.nodes.push_back({hosts_[rank], rank, m.at("probe"), m.at("system_yaml").get<std::string>()});
    }

    void fail(int rank, const std::string& phase, const std::string& reason) {
        alive_.erase(rank);
        in_.failures.push_back({rank, hosts_.count(rank) ? hosts_[rank] : std::string(), phase, reason});
    }

    // Every rank's node report, polled round-robin until all are in or the deadline passes.
    void roll_call() {
        std::set<int> pending;
        for (int r = 1; r < t_.size(); ++r) pending.insert(r);
        const auto deadline = after(o_.timeout_s);
        while (!pending.empty()) {
            for (auto it = pending.begin(); it != pending.end();) {
                std::string msg;
                if (t_.recv(*it, kTagNode, msg, 0) == Wait::ok) {
                    accept_node(json::parse(msg));
                    it = pending.erase(it);
                } else {
                    ++it;
                }
            }
            if (pending.empty() || seconds_left(deadline) <= 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        for (int r : pending)
            fail(r, "roll call", fmt::format("sent no report within {:.0f} s of rank 0's: the process hung, died or never "
                                             "started",
                                             o_.timeout_s));
        in_.layout = layout();
        pairs_ = pair_schedule(in_.layout);
        nccl_wanted_ = o_.fabric != "mpi" && every_rank_has_a_gpu();
        if (o_.fabric == "nccl" && !nccl_wanted_) in_.notes.push_back("--fabric nccl: not every rank has a GPU of its own; measured over MPI");
        const std::vector<int> group(alive_.begin(), alive_.end());
        const json plan = {{"do", "plan"}, {"plan", to_json(o_.plan)}, {"pairs", pairs_.size()},
                           {"fabric", nccl_wanted_ ? "nccl" : "mpi"}, {"group", group}};
        for (int r : group)
            if (r != 0 && t_.send(r, kTagCommand, plan.dump(), o_.plan.timeout_s) != Wait::ok)
                fail(r, "roll call", "did not take the measurement plan");
        // Barriers and collectives over the ranks that answered (the others may be stuck anywhere).
        if (static_cast<int>(group.size()) != t_.size() && t_.use_group(group) != Wait::ok)
            in_.notes.push_back("could not form the group of the ranks that answered");
        group_ = group;
    }

    // NCCL when every node measured as many GPUs as it runs ranks.
    bool every_rank_has_a_gpu() const {
        if (in_.nodes.size() != in_.layout.hosts.size()) return false;
        for (const auto& n : in_.nodes) {
            const int h = in_.layout.host_of(n.rank);
            const auto gpus = n.probe.value("gpus", json::array()).size();
            if (h < 0 || gpus < in_.layout.ranks_of_host[static_cast<size_t>(h)].size()) return false;
        }
        return true;
    }

    // Every rank starts NCCL together; if any cannot, the fabric is measured over MPI by all.
    void choose_fabric() {
        if (!nccl_wanted_) return;
        std::string why;
        nccl_ = start_nccl(t_, launch_, o_.plan, group_, why);
        std::vector<std::string> refusals;
        if (!nccl_) refusals.push_back("rank 0: " + why);
        std::vector<int> others(group_.begin() + 1, group_.end());
        for (auto& [r, report] : collect(others, 90, "fabric (NCCL start)"))
            if (!report.value("nccl", std::string()).empty())
                refusals.push_back(fmt::format("rank {}: {}", r, report.at("nccl").get<std::string>()));
        const bool use = refusals.empty() && alive_.size() == group_.size();
        for (int r : alive_)
            if (r != 0) t_.send(r, kTagCommand, json{{"do", "fabric"}, {"use", use ? "nccl" : "mpi"}}.dump(), o_.plan.timeout_s);
        if (use) {
            fabric_ = nccl_.get();
            return;
        }
        nccl_.reset();
        for (const auto& w : refusals) in_.notes.push_back("NCCL did not start (" + w + "): the fabric was measured over MPI");
    }

    // Hosts in order of their lowest rank; each host's ranks in order.
    Layout layout() const {
        Layout l;
        for (int r : alive_) {
            const std::string& h = hosts_.at(r);
            auto it = std::find(l.hosts.begin(), l.hosts.end(), h);
            if (it == l.hosts.end()) {
                l.hosts.push_back(h);
                l.ranks_of_host.push_back({r});
            } else {
                l.ranks_of_host[static_cast<size_t>(it - l.hosts.begin())].push_back(r);
            }
        }
        return l;
    }

    // Reports from `ranks` (commands they were given), until all are in or the deadline passes; the silent ones fail.
    std::map<int, json> collect(const std::vector<int>& ranks, double timeout_s, const std::string& phase) {
        std::map<int, json> got;
        const auto deadline = after(timeout_s);
        for (;;) {
            for (int r : ranks) {
                std::string msg;
                if (!got.count(r) && t_.recv(r, kTagReport, msg, 0) == Wait::ok) got[r] = json::parse(msg);
            }
            if (got.size() == ranks.size() || seconds_left(deadline) <= 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        for (int r : ranks)
            if (!got.count(r)) fail(r, phase, fmt::format("did not report within {:.0f} s: the process hung or died", timeout_s));
        return got;
    }

    void note_stop(int rank, const json& report) {
        if (report.contains("stopped")) fabric(rank).stopped = report.at("stopped").get<std::string>();
    }

    RankFabric& fabric(int rank) {
        for (auto& f : in_.fabric)
            if (f.rank == rank) return f;
        in_.fabric.push_back(RankFabric{});
        in_.fabric.back().rank = rank;
        return in_.fabric.back();
    }

    void direct_pair_tests() {
        for (const PairTest& p : pairs_) {
            if (!alive_.count(p.src) || !alive_.count(p.dst)) continue;
            if (p.dst != 0) t_.send(p.dst, kTagCommand, json{{"do", "answer"}, {"peer", p.src}, {"tier", p.tier}}.dump(), o_.plan.timeout_s);
            if (p.src != 0) t_.send(p.src, kTagCommand, json{{"do", "send"}, {"peer", p.dst}, {"tier", p.tier}}.dump(), o_.plan.timeout_s);
            std::optional<PairSamples> sent;
            std::vector<double> received_GBps;
            try {
                if (p.src == 0) sent = measure_send(*fabric_, o_.plan, p.tier, p.dst, o_.send_delay_us);
                if (p.dst == 0) received_GBps = answer_send(*fabric_, o_.plan, p.tier, p.src, o_.send_delay_us);
            } catch (const FabricStop& s) {
                fabric(0).stopped = s.why;
            }
            std::vector<int> others;
            for (int r : {p.src, p.dst})
                if (r != 0) others.push_back(r);
            // Each side's waits are bounded by the plan's timeout; a side that has not reported well after it is stuck.
            for (auto& [r, report] : collect(others, 1.5 * o_.plan.timeout_s + 2, "fabric (point-to-point)")) {
                note_stop(r, report);
                if (report.contains("pair")) sent = pair_samples_from_json(report.at("pair"));
                if (report.contains("GBps")) received_GBps = report.at("GBps").get<std::vector<double>>();
            }
            // Latency from the sender's round trips, bandwidth from the receiver's clock (the arrivals' pace).
            if (sent && !received_GBps.empty()) {
                sent->GBps = received_GBps;
                fabric(p.src).sends.push_back(*sent);
            }
        }
    }

    void direct_collectives() {
        std::vector<int> group(alive_.begin(), alive_.end());
        if (group.size() < 2) return;
        const bool regroup = group != group_;
        for (int r : group)
            if (r != 0) t_.send(r, kTagCommand, json{{"do", "collectives"}, {"group", group}, {"regroup", regroup}}.dump(), o_.plan.timeout_s);
        if (regroup && !regrouped(t_, *fabric_, group)) {
            fabric(0).stopped = "could not form the group of the ranks that answered";
            return;
        }
        std::string stopped;
        fabric(0).collectives = measure_collectives(*fabric_, o_.plan, static_cast<int>(group.size()), o_.send_delay_us, stopped);
        if (!stopped.empty()) fabric(0).stopped = stopped;
        std::vector<int> others(group.begin() + 1, group.end());
        for (auto& [r, report] : collect(others, 1.5 * o_.plan.timeout_s + 2, "fabric (collectives)")) {
            note_stop(r, report);
            for (const auto& c : report.at("collectives")) fabric(r).collectives.push_back(collective_samples_from_json(c));
        }
    }

    ClusterProbeOutcome outcome() {
        in_.launcher = launch_.launcher;
        in_.transport = fabric_->description();
        in_.world_size = t_.size();
        in_.layout = layout();  // without the ranks that failed on the way
        const ClusterSummary s = analyse_cluster(in_);
        ClusterProbeOutcome out;
        out.rank0 = true;
        nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
        for (const auto& n : in_.nodes)
            nodes.push_back({{"host", n.host}, {"rank", n.rank}, {"probe", nlohmann::ordered_json::parse(n.probe.dump())}});
        const nlohmann::ordered_json doc = {{"cluster", to_json(s, in_)}, {"nodes", nodes}};
        out.json = doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
        out.text = to_text(s, in_);
        if (!in_.nodes.empty()) out.system_yaml = cluster_system_yaml(in_, s);
        for (const auto& f : in_.failures)
            out.errors.push_back(fmt::format("rank {}{}: {}: {}", f.rank, f.host.empty() ? "" : " (" + f.host + ")", f.phase, f.reason));
        out.failed = !in_.failures.empty();
        return out;
    }

    const ClusterProbeOptions& o_;
    const LaunchInfo& launch_;
    Transport& t_;
    ClusterInput in_;
    std::map<int, std::string> hosts_;
    std::set<int> alive_;
    std::vector<PairTest> pairs_;
    std::vector<int> group_;  // the ranks barriers and collectives run over
    bool nccl_wanted_ = false;
    std::unique_ptr<Transport> nccl_;
    Transport* fabric_ = &t_;  // what the fabric is measured over: MPI (the control transport) or NCCL
};

// Any other rank: report the node, then do what rank 0 says until it says end.
ClusterProbeOutcome follow(const ClusterProbeOptions& o, const LaunchInfo& launch, Transport& t) {
    ClusterProbeOutcome out;
    auto rank0_silent = [&](const std::string& what, double s) {
        out.errors.push_back(fmt::format("rank 0: {} within {:.0f} s: it hung or died (rank {} stops)", what, s, t.rank()));
        out.failed = true;
        return out;
    };
    const json node = measure_node(o, launch, hostname(), t.rank());
    // Rank 0 takes reports once its own node is measured: allow for that, the roll call, and the plan.
    const double first_wait = node_allowance(o) + 2 * o.timeout_s;
    if (t.send(0, kTagNode, node.dump(), first_wait) != Wait::ok) return rank0_silent("took no node report", first_wait);
    if (o.fault == "stop") ::raise(SIGSTOP);  // a rank that hangs: stopped until the launcher ends the job
    if (o.fault == "kill") ::raise(SIGKILL);  // a rank that dies
    FabricPlan plan = o.plan;
    double wait_s = first_wait;
    std::unique_ptr<Transport> nccl;
    Transport* fabric = &t;
    for (;;) {
        std::string msg;
        if (t.recv(0, kTagCommand, msg, wait_s) != Wait::ok) return rank0_silent("sent no next step", wait_s);
        const json cmd = json::parse(msg);
        const std::string what = cmd.at("do").get<std::string>();
        json report = json::object();
        try {
            if (what == "end") {
                out.rank0_ends_job = cmd.value("failed", false);
                return out;
            }
            if (what == "plan") {
                plan = fabric_plan_from_json(cmd.at("plan"));
                // Between two steps of this rank, rank 0 runs the other pairs' tests, each within its timeout.
                wait_s = plan.timeout_s * (3.0 + 1.5 * cmd.at("pairs").get<double>());
                const auto group = cmd.at("group").get<std::vector<int>>();
                if (static_cast<int>(group.size()) != t.size()) t.use_group(group);
                if (cmd.at("fabric").get<std::string>() != "nccl") continue;
                std::string why;
                nccl = start_nccl(t, launch, plan, group, why);
                report["nccl"] = nccl ? std::string() : why;
            } else if (what == "fabric") {
                if (cmd.at("use").get<std::string>() == "nccl" && nccl) fabric = nccl.get();
                else nccl.reset();
                continue;
            }
            if (what == "send") {
                PairSamples p = measure_send(*fabric, plan, cmd.at("tier").get<std::string>(), cmd.at("peer").get<int>(), o.send_delay_us);
                report["pair"] = to_json(p);
            } else if (what == "answer") {
                report["GBps"] = answer_send(*fabric, plan, cmd.at("tier").get<std::string>(), cmd.at("peer").get<int>(), o.send_delay_us);
            } else if (what == "collectives") {
                const auto group = cmd.at("group").get<std::vector<int>>();
                std::string stopped;
                json colls = json::array();
                if (cmd.at("regroup").get<bool>() && !regrouped(t, *fabric, group)) {
                    stopped = "could not form the group of the ranks that answered";
                } else {
                    for (const auto& c : measure_collectives(*fabric, plan, static_cast<int>(group.size()), o.send_delay_us, stopped))
                        colls.push_back(to_json(c));
                }
                report["collectives"] = colls;
                if (!stopped.empty()) report["stopped"] = stopped;
            }
        } catch (const FabricStop& s) {
            report["stopped"] = s.why;
        }
        t.send(0, kTagReport, report.dump(), plan.timeout_s);
    }
}

}  // namespace

ClusterProbeOutcome run_cluster_probe(const ClusterProbeOptions& options, const LaunchInfo& launch, Transport& t) {
    if (t.rank() == 0) return Coordinator(options, launch, t).run();
    return follow(options, launch, t);
}

}  // namespace ftb::cluster
