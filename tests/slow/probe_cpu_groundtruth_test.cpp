// Slow tier: the CPU ground truth (tools/groundtruth/cpu_collect.py, validation/measured/cpu-*/) against
// `ftbound plan` on the probed system file. Reports the signed error of every step time; fails only when
// the plan cannot be made or gives no finite positive step time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string run_plan(const fs::path& job, int& code) {
    std::string cmd = std::string(FTBOUND_BINARY) + " plan " + job.string() + " --json 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return out;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    code = pclose(p);
    return out;
}

// Fields of a cases.csv row: id,job,quantity,measured,unit,source,note (source and note may be quoted).
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> f;
    std::string cur;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) f.push_back(cur), cur.clear();
        else cur += c;
    }
    f.push_back(cur);
    return f;
}

}  // namespace

TEST(ProbeCpuGroundTruth, StepTimeAgainstPlan) {
    fs::path root = fs::path(FTBOUND_SOURCE_DIR) / "validation" / "measured";
    int cases = 0;
    double abs_error_sum = 0;
    for (const auto& dir : fs::directory_iterator(root)) {
        if (dir.path().filename().string().rfind("cpu-", 0) != 0) continue;
        std::ifstream csv(dir.path() / "cases.csv");
        std::string line;
        std::getline(csv, line);  // header
        while (std::getline(csv, line)) {
            auto f = split_csv(line);
            if (f.size() < 4 || f[2] != "step_seconds") continue;
            int code = -1;
            std::string out = run_plan(dir.path() / f[1], code);
            ASSERT_EQ(code, 0) << f[0] << ": " << out;
            auto j = nlohmann::json::parse(out, nullptr, false);
            ASSERT_FALSE(j.is_discarded()) << out;
            double predicted = j["step"]["seconds"].get<double>();
            double measured = std::stod(f[3]);
            ASSERT_TRUE(std::isfinite(predicted) && predicted > 0) << f[0];
            double error = (predicted - measured) / measured;
            abs_error_sum += std::fabs(error);
            ++cases;
            std::printf("%-28s measured %8.3f s  predicted %8.3f s  error %+7.1f %%\n", f[0].c_str(), measured, predicted, 100 * error);
        }
    }
    if (cases == 0) GTEST_SKIP() << "no validation/measured/cpu-*/cases.csv";
    std::printf("CPU step time: %d cases, mean absolute error %.1f %%\n", cases, 100 * abs_error_sum / cases);
}
