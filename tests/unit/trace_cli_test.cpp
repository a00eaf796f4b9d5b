// `ftbound diagnose` end to end: exit codes, `error:` lines, nothing on stdout when failing, --partial.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include "test_paths.hpp"

namespace {
struct CliRun {
    int code;
    std::string out, err;
};
std::string data_path(const std::string& name) { return std::string(ftb_test::test_data()) + "/traces/" + name; }
// ctest runs each test as its own process, several at once: every scratch path carries the process id.
std::string scratch_path(const std::string& name) {
    return ::testing::TempDir() + "ftb_trace_cli_" + std::to_string(getpid()) + "_" + name;
}
std::string tmp_file(const std::string& name, const std::string& bytes) {
    std::string path = scratch_path(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}
std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
CliRun run_diagnose_cli(const std::string& args) {
    std::string err_path = scratch_path("stderr");
    std::string cmd = std::string(ftb_test::binary()) + " diagnose " + args + " 2>" + err_path;
    CliRun r{};
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = slurp(err_path);
    return r;
}
}  // namespace

TEST(TraceCli, BadInputsExitTwoWithAnErrorLine) {
    const std::string gz = slurp(data_path("hta_sampled_rank-0.json.gz"));
    const std::string plain = slurp(data_path("hand_new_style.json"));
    const std::pair<std::string, std::string> cases[] = {
        {"random.bin", std::string("\x13\x8f\xff\x00 random \x01\x02", 14)},
        {"empty_object.json", "{}"},
        {"numbers.json", "[1, 2, 3]"},
        {"truncated.json.gz", gz.substr(0, gz.size() / 2)},
        {"truncated.json", plain.substr(0, plain.size() / 2)},
        {"empty.json", ""},
    };
    for (auto& [name, bytes] : cases) {
        CliRun r = run_diagnose_cli(tmp_file(name, bytes) + " --json");
        EXPECT_EQ(r.code, 2) << name << ": " << r.err;
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << name << ": " << r.err;
        EXPECT_TRUE(r.out.empty()) << name;
    }
    CliRun missing = run_diagnose_cli("/nonexistent/trace.json");
    EXPECT_EQ(missing.code, 2);
    CliRun folder = run_diagnose_cli(::testing::TempDir());
    EXPECT_EQ(folder.code, 2);
    EXPECT_NE(folder.err.find("is a folder, not a trace file"), std::string::npos) << folder.err;
}

TEST(TraceCli, PartialAnalysesWhatWasRead) {
    const std::string gz = slurp(data_path("hta_sampled_rank-0.json.gz"));
    CliRun r = run_diagnose_cli(tmp_file("partial.json.gz", gz.substr(0, gz.size() / 2)) + " --json --partial");
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j["per_rank"][0]["read"]["complete"].get<bool>());
    EXPECT_GT(j["per_rank"][0]["read"]["events"].get<int>(), 0);
    EXPECT_NE(j["per_rank"][0]["read"]["stop_reason"].get<std::string>().find("truncated gzip"), std::string::npos);
    EXPECT_FALSE(j["warnings"].empty());
}

TEST(TraceCli, JsonHasTheContractKeys) {
    CliRun r = run_diagnose_cli(data_path("hta_sampled_rank-0.json.gz") + " " + data_path("hta_sampled_rank-1.json.gz") + " --json");
    ASSERT_EQ(r.code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["ranks"], 2);
    for (const char* k : {"compute", "communication", "memcpy", "idle"}) {
        double f = j["gpu"][k];
        EXPECT_GE(f, 0.0);
        EXPECT_LE(f, 1.0);
    }
    for (const char* k : {"host_wait", "kernel_wait", "other"}) EXPECT_TRUE(j["idle"].contains(k));
    for (const char* k : {"h2d_bytes", "d2h_bytes", "d2d_bytes", "h2d_GBps", "d2h_GBps", "pageable_fraction"})
        EXPECT_TRUE(j["memcpy"].contains(k)) << k;
    EXPECT_TRUE(j["overlap"].contains("comm_compute"));
    EXPECT_TRUE(j["bottleneck"]["resource"].is_string());
    ASSERT_FALSE(j["top_kernels"].empty());
    for (const char* k : {"name", "count", "seconds", "share"}) EXPECT_TRUE(j["top_kernels"][0].contains(k));
    EXPECT_EQ(j["straggler"]["rank"], 1);
}
