// Wall-clock and CPU time of whole processes, for bench/cli_latency.sh: each sample is posix_spawn to wait4 of
// one command, so it counts exec, dynamic loading, the command's work and exit, and nothing of a shell (a bash
// `$(time ...)` forks a subshell per sample, which on this VM added ~8 ms to every figure).
//
//   spawn_latency RUNS OUT_DIR -- CMD0 ARGS... ::: CMD1 ARGS... [::: ...]
//
// Runs the commands round-robin (cmd0, cmd1, ..., cmd0, ...) RUNS times each after 3 warm-up rounds, stdout and
// stderr to /dev/null, and writes OUT_DIR/wall.K and OUT_DIR/cpu.K: one sample per line in microseconds (wall from
// CLOCK_MONOTONIC, CPU = the child's user + system time from wait4's rusage). Exit 1 when a command fails (its
// exit status on stderr), 2 on bad usage.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kWarmupRounds = 3;

struct Sample {
    long long wall_us = 0;
    long long cpu_us = 0;
    int status = 0;
};

long long now_us() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

long long to_us(const timeval& t) { return t.tv_sec * 1000000LL + t.tv_usec; }

// One run of `argv` with its output discarded; status is wait4's (0 = exited 0), or -1 when it could not start.
Sample run_once(const std::vector<char*>& argv) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    Sample s;
    pid_t pid = 0;
    const long long start = now_us();
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        s.status = -1;
        return s;
    }
    rusage usage{};
    if (wait4(pid, &s.status, 0, &usage) != pid) s.status = -1;
    s.wall_us = now_us() - start;
    s.cpu_us = to_us(usage.ru_utime) + to_us(usage.ru_stime);
    return s;
}

// The commands after "--", split at ":::", each as a null-terminated argv.
std::vector<std::vector<char*>> split_commands(int argc, char** argv, int first) {
    std::vector<std::vector<char*>> commands(1);
    for (int i = first; i < argc; ++i) {
        if (std::strcmp(argv[i], ":::") == 0) {
            commands.emplace_back();
            continue;
        }
        commands.back().push_back(argv[i]);
    }
    for (auto& c : commands) c.push_back(nullptr);
    return commands;
}

bool write_samples(const std::string& path, const std::vector<long long>& values) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return false;
    for (long long v : values) std::fprintf(f, "%lld\n", v);
    return std::fclose(f) == 0;
}

int usage_error(const char* why) {
    std::fprintf(stderr, "error: %s\nusage: spawn_latency RUNS OUT_DIR -- CMD ARGS... [::: CMD ARGS...]\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || std::strcmp(argv[3], "--") != 0) return usage_error("missing arguments");
    char* end = nullptr;
    const long runs = std::strtol(argv[1], &end, 10);
    if (*end != '\0' || runs < 1) return usage_error("RUNS must be a positive integer");
    const std::string out_dir = argv[2];
    const auto commands = split_commands(argc, argv, 4);
    for (const auto& c : commands)
        if (c.size() < 2) return usage_error("an empty command (two ::: in a row, or ::: at the end)");

    std::vector<std::vector<long long>> wall(commands.size()), cpu(commands.size());
    for (long round = 0; round < kWarmupRounds + runs; ++round) {
        for (size_t k = 0; k < commands.size(); ++k) {
            const Sample s = run_once(commands[k]);
            if (s.status != 0) {
                std::fprintf(stderr, "error: command %zu (%s) %s\n", k, commands[k][0],
                             s.status < 0 ? "could not be started" : "did not exit with status 0");
                return 1;
            }
            if (round < kWarmupRounds) continue;
            wall[k].push_back(s.wall_us);
            cpu[k].push_back(s.cpu_us);
        }
    }
    for (size_t k = 0; k < commands.size(); ++k) {
        const std::string n = std::to_string(k);
        if (!write_samples(out_dir + "/wall." + n, wall[k]) || !write_samples(out_dir + "/cpu." + n, cpu[k])) {
            std::fprintf(stderr, "error: cannot write samples under %s\n", out_dir.c_str());
            return 1;
        }
    }
    return 0;
}
