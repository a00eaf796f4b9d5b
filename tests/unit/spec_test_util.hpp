// Helpers for the input-layer tests (spec_*_test.cpp, model_params_test.cpp): run the real ftbound binary
// with stdout and stderr captured apart, a wall-clock limit and optionally an address-space limit, and
// write scratch files into a folder private to this test process (ctest runs tests in parallel).
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "test_paths.hpp"

namespace spec_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizedAddressSpace = true;
#else
inline constexpr bool kSanitizedAddressSpace = false;
#endif

struct CliResult {
    int exit_code = -1;    // exit status, or -1 when killed by a signal
    int signal = 0;        // the signal that ended it (SIGALRM = ran past the time limit)
    std::string out, err;
    double seconds = 0;
};

inline std::string scratch_dir() {
    static const std::string dir = [] {
        std::string d = ::testing::TempDir() + "ftb_spec_" + std::to_string(getpid());
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline std::string write_scratch(const std::string& name, const std::string& bytes) {
    const std::string path = scratch_dir() + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::string data_path(const std::string& rel) { return std::string(ftb_test::test_data()) + "/spec/" + rel; }

// Runs the built ftbound with `args` (no shell). A child that outlives `timeout_s` gets SIGALRM (the alarm
// survives exec); `address_limit_bytes` > 0 caps its address space so a runaway allocation fails fast
// instead of taking the machine's memory.
inline CliResult run_ftbound(const std::vector<std::string>& args, unsigned timeout_s = 30,
                             rlim_t address_limit_bytes = 0) {
    static int counter = 0;
    const std::string base = scratch_dir() + "/run" + std::to_string(counter++);
    const std::string out_path = base + ".out", err_path = base + ".err";
    std::vector<std::string> argv_s{ftb_test::binary()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    const auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0) _exit(125);
        dup2(o, 1);
        dup2(e, 2);
        // AddressSanitizer reserves terabytes of shadow address space up front: an address-space cap would
        // stop the sanitized binary before main(). Under ASan the cap is left off (ASan reports runaway
        // allocations itself).
        if (address_limit_bytes > 0 && !kSanitizedAddressSpace) {
            struct rlimit rl{address_limit_bytes, address_limit_bytes};
            setrlimit(RLIMIT_AS, &rl);
        }
        struct rlimit core{0, 0};
        setrlimit(RLIMIT_CORE, &core);
        alarm(timeout_s);
        execv(argv[0], argv.data());
        _exit(127);
    }
    CliResult r;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        r.err = "fork/wait failed";
        return r;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return r;
}

inline std::string describe(const CliResult& r) {
    std::string s = "exit " + std::to_string(r.exit_code);
    if (r.signal) s += " signal " + std::to_string(r.signal) + (r.signal == SIGALRM ? " (time limit)" : "");
    s += "\n--- stderr ---\n" + r.err.substr(0, 2000) + "\n--- stdout ---\n" + r.out.substr(0, 600);
    return s;
}

}  // namespace spec_test
