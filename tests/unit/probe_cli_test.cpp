// `ftbound probe` end to end on this machine (no GPU needed): exit codes, one JSON document, the system file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include "test_paths.hpp"

namespace {
struct CliRun {
    int code = -1;
    std::string out;
};
CliRun run_cli(const std::string& args) {
    CliRun r;
    std::string cmd = std::string(ftb_test::binary()) + " " + args + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}
}  // namespace

TEST(ProbeCli, QuickJsonAndSystemFile) {
    auto dir = std::filesystem::current_path() / "probe-cli-test";
    std::filesystem::create_directories(dir);
    auto out = dir / "probed.yaml";
    CliRun r = run_cli("probe --json --quick --threads 2 --dir " + dir.string() + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    auto j = nlohmann::json::parse(r.out);  // exactly one document
    EXPECT_GT(j["host"]["memory_bandwidth_GBps"].get<double>(), 0);
    EXPECT_GT(j["host"]["cores"].get<int>(), 0);
    EXPECT_TRUE(j["gpus"].is_array());
    EXPECT_TRUE(j["samples"].contains("host.memory_bandwidth_GBps"));
    if (j["gpus"].empty()) {
        bool gpu_skipped = false;
        for (const auto& s : j["skipped"]) gpu_skipped |= s.get<std::string>().rfind("gpu", 0) == 0;
        EXPECT_TRUE(gpu_skipped);
    }
    YAML::Node y = YAML::LoadFile(out.string());
    EXPECT_TRUE(y["measured_fields"].IsSequence());
    EXPECT_TRUE(y["cpu"]["memory_bandwidth_GBps"]);
    std::filesystem::remove_all(dir);
}

TEST(ProbeCli, BadFolderIsExit2WithNothingOnStdout) {
    CliRun r = run_cli("probe --quick --dir /nonexistent-ftbound-dir");
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(r.out.empty()) << r.out;
    CliRun r2 = run_cli("probe --quick --out /nonexistent-ftbound-dir/x.yaml");
    EXPECT_EQ(r2.code, 2);
    EXPECT_TRUE(r2.out.empty());
}
