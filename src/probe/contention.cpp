#include "probe/contention.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace ftb::probe {
namespace {

namespace fs = std::filesystem;

// "cpuN user nice system idle iowait irq softirq steal ..." (proc(5)); guest time is already inside user.
void add_cpu_line(const std::string& line, CpuCounters& c) {
    std::istringstream in(line);
    std::string name;
    std::uint64_t v[8] = {0};
    in >> name;
    for (auto& x : v) in >> x;
    const std::uint64_t total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    c.total_ticks += total;
    c.busy_ticks += total - v[3] - v[4] - v[7];
    c.steal_ticks += v[7];
}

// utime + stime and the parent of /proc/PID/stat; the name sits in parentheses and may hold spaces.
bool read_process(const fs::path& stat, std::string& name, int& ppid, std::uint64_t& ticks) {
    std::ifstream f(stat);
    std::string s;
    if (!std::getline(f, s)) return false;
    const auto open = s.find('('), close = s.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return false;
    name = s.substr(open + 1, close - open - 1);
    std::istringstream in(s.substr(close + 2));
    std::string field;
    std::vector<std::string> f3;  // fields 3.. (state, ppid, ...)
    while (in >> field && f3.size() < 13) f3.push_back(field);
    if (f3.size() < 13) return false;
    ppid = std::atoi(f3[1].c_str());
    ticks = std::strtoull(f3[11].c_str(), nullptr, 10) + std::strtoull(f3[12].c_str(), nullptr, 10);  // fields 14, 15
    return true;
}

}  // namespace

CpuCounters read_cpu_counters(const std::vector<int>& cpus, const std::string& root) {
    CpuCounters c;
    const fs::path proc = fs::path(root) / "proc";
    std::ifstream(proc / "loadavg") >> c.load_1m;
    const std::set<int> watched(cpus.begin(), cpus.end());
    std::ifstream stat(proc / "stat");
    for (std::string line; std::getline(stat, line);) {
        if (line.rfind("cpu", 0) != 0) continue;
        const bool all = line.size() > 3 && line[3] == ' ';
        if (watched.empty() ? all : (!all && watched.count(std::atoi(line.c_str() + 3)))) add_cpu_line(line, c);
    }
    const int self = static_cast<int>(::getpid());
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(proc, ec)) {
        const std::string pid_text = e.path().filename().string();
        if (pid_text.empty() || !std::all_of(pid_text.begin(), pid_text.end(), ::isdigit)) continue;
        std::string name;
        int ppid = 0;
        std::uint64_t ticks = 0;
        if (!read_process(e.path() / "stat", name, ppid, ticks)) continue;
        const int pid = std::atoi(pid_text.c_str());
        if (pid == self) c.self_ticks = ticks;
        else if (ppid != self) c.processes[pid] = {name, ticks};  // children (python with --torch) are our own work
    }
    return c;
}

Contention contention_between(const CpuCounters& before, const CpuCounters& after, int cpus) {
    Contention c;
    c.load_1m = before.load_1m;
    c.cpus = cpus;
    const double total = static_cast<double>(after.total_ticks - before.total_ticks);
    if (total <= 0 || cpus <= 0) return c;
    const double busy = static_cast<double>(after.busy_ticks - before.busy_ticks);
    const double self = static_cast<double>(after.self_ticks - before.self_ticks);
    c.other_busy_fraction = std::clamp((busy - self) / total, 0.0, 1.0);
    c.steal_fraction = std::clamp(static_cast<double>(after.steal_ticks - before.steal_ticks) / total, 0.0, 1.0);
    const double ticks_per_cpu = total / cpus;
    for (const auto& [pid, p] : after.processes) {
        auto it = before.processes.find(pid);
        if (it == before.processes.end() || p.second < it->second.second) continue;
        const double used = static_cast<double>(p.second - it->second.second) / ticks_per_cpu;
        if (used >= 0.05) c.top.push_back({pid, p.first, used});
    }
    std::sort(c.top.begin(), c.top.end(), [](auto& a, auto& b) { return a.cpus > b.cpus; });
    if (c.top.size() > 5) c.top.resize(5);
    c.loaded = c.other_busy_fraction > kLoadedBusyFraction || c.steal_fraction > kLoadedStealFraction;
    if (c.loaded) {
        std::string who;
        for (const auto& p : c.top) who += fmt::format("{}{} {:.1f} CPUs", who.empty() ? "" : ", ", p.name, p.cpus);
        c.summary = fmt::format("probe under load: other processes took {:.0f}% of the {} CPUs it measured on{}, steal "
                                "{:.0f}%, load average {:.1f} at the start; the rates are low by about as much: repeat "
                                "on an idle machine",
                                100 * c.other_busy_fraction, cpus, who.empty() ? "" : " (" + who + ")",
                                100 * c.steal_fraction, c.load_1m);
    }
    return c;
}

}  // namespace ftb::probe
