// Is the machine busy while the probe measures it? A probe under load reads low rates, and says so: the load
// average when it starts, the CPU time other processes take on the probe's CPUs while it runs (and which
// processes), and the hypervisor's steal time, all from /proc (proc(5): /proc/loadavg, /proc/stat, /proc/PID/stat).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ftb::probe {

// Counters read at one moment; two of them give the contention over the interval between.
struct CpuCounters {
    double load_1m = 0;
    std::uint64_t total_ticks = 0;  // of the CPUs watched: user+nice+system+idle+iowait+irq+softirq+steal
    std::uint64_t busy_ticks = 0;   // of those: everything but idle and iowait (steal excluded)
    std::uint64_t steal_ticks = 0;
    std::uint64_t self_ticks = 0;   // this process (all its threads)
    std::map<int, std::pair<std::string, std::uint64_t>> processes;  // pid -> (name, utime + stime ticks)
};

// `cpus`: the CPUs to watch (those the probe may run on); empty: all. `root`: where /proc is ("/" normally).
CpuCounters read_cpu_counters(const std::vector<int>& cpus, const std::string& root = "/");

struct BusyProcess {
    int pid = 0;
    std::string name;
    double cpus = 0;  // CPUs' worth it used over the interval (1.0 = one CPU all the time)
};

struct Contention {
    double load_1m = 0;              // at the start
    int cpus = 0;                    // watched
    double other_busy_fraction = 0;  // of the watched CPUs' time, taken by other processes
    double steal_fraction = 0;       // of the watched CPUs' time, taken by the hypervisor
    std::vector<BusyProcess> top;    // the other processes that used the most CPU, at most 5
    bool loaded = false;             // other work or steal large enough to lower the rates measured
    std::string summary;             // one line saying so, empty when not loaded
};

// Other work above this share of the CPUs, or steal above this, lowers a rate measured on every core by about as
// much: a probe then says it ran under load. A design choice (two probes of an idle machine agree within 10%).
inline constexpr double kLoadedBusyFraction = 0.10;
inline constexpr double kLoadedStealFraction = 0.05;

Contention contention_between(const CpuCounters& before, const CpuCounters& after, int cpus);

}  // namespace ftb::probe
