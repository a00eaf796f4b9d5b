// `diagnose --summary-out` per rank + `diagnose --merge`: the same report as one pass over the traces (the shared
// traces, tests/data/traces/), a summary that round-trips every figure exactly, 1,000 summaries merged in under a
// second, and one clear error for a file that is not a summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ftbound/error.hpp"
#include "trace/diagnose_summary.hpp"
#include "trace/trace_file.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using namespace ftb::trace;

namespace {

std::string trace_path(const std::string& name) { return std::string(ftb_test::test_data()) + "/traces/" + name; }

fs::path scratch(const std::string& name) {
    fs::path p = fs::path(::testing::TempDir()) / ("ftb_summary_" + std::to_string(getpid())) / name;
    fs::create_directories(p.parent_path());
    return p;
}

struct CliRun {
    int code = -1;
    std::string out;
};

CliRun run_cli(const std::string& args) {
    CliRun r;
    FILE* p = popen((std::string(ftb_test::binary()) + " " + args + " 2>/dev/null").c_str(), "r");
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// The shared traces in rank order (distributedInfo.rank), as one pass and the merge list them.
const std::vector<std::string> kTraces = {"hta_nccl_data_rank0.json.gz", "hta_negative_queue_rank0.json.gz",
                                          "hta_sampled_rank-0.json.gz", "hta_sampled_rank-1.json.gz"};

}  // namespace

TEST(DiagnoseSummary, MergeEqualsOnePassOverTheSharedTraces) {
    std::string all, summaries;
    for (const auto& t : kTraces) {
        const fs::path s = scratch(t + ".summary.json");
        CliRun w = run_cli("diagnose " + trace_path(t) + " --summary-out " + s.string());
        ASSERT_EQ(w.code, 0) << t << ": " << w.out;
        EXPECT_LT(fs::file_size(s), fs::file_size(trace_path(t))) << "a summary is smaller than its (gzip) trace";
        all += " " + trace_path(t);
        summaries += " " + s.string();
    }
    for (const char* form : {"--json", ""}) {
        CliRun one = run_cli("diagnose" + all + " " + form);
        CliRun merged = run_cli("diagnose --merge" + summaries + " " + form);
        ASSERT_EQ(one.code, 0);
        ASSERT_EQ(merged.code, 0) << merged.out;
        EXPECT_EQ(merged.out, one.out) << form;
    }
    // The two ranks of one job, given in either order: merged by rank.
    const std::string r0 = scratch("hta_sampled_rank-0.json.gz.summary.json").string();
    const std::string r1 = scratch("hta_sampled_rank-1.json.gz.summary.json").string();
    EXPECT_EQ(run_cli("diagnose --merge " + r1 + " " + r0 + " --json").out,
              run_cli("diagnose " + trace_path(kTraces[2]) + " " + trace_path(kTraces[3]) + " --json").out);
}

TEST(DiagnoseSummary, RoundTripsEveryFigure) {
    const TraceTables t = read_trace_file(trace_path("hta_nccl_data_rank0.json.gz"));
    const RankAnalysis a = analyse_rank(t, 0, SIZE_MAX);
    const fs::path p = scratch("roundtrip.json");
    std::ofstream(p) << summary_json("x.json.gz", t, a);
    const RankSummary s = read_summary(p.string());
    EXPECT_EQ(s.trace_file, "x.json.gz");
    EXPECT_EQ(s.analysis.window_seconds, a.window_seconds);
    EXPECT_EQ(s.analysis.gpu.compute, a.gpu.compute);
    EXPECT_EQ(s.analysis.idle.host_wait_in_dataloader, a.idle.host_wait_in_dataloader);
    EXPECT_EQ(s.analysis.memcpy.h2d_ns, a.memcpy.h2d_ns);
    ASSERT_EQ(s.analysis.top_kernels.size(), a.top_kernels.size());
    EXPECT_EQ(s.analysis.top_kernels.back().name, a.top_kernels.back().name);
    ASSERT_EQ(s.analysis.collectives.size(), a.collectives.size());
    ASSERT_FALSE(a.collectives.empty());
    EXPECT_EQ(s.analysis.collectives.back().start_ns, a.collectives.back().start_ns);
    EXPECT_EQ(s.facts.devices.size(), t.devices.size());
    EXPECT_EQ(s.facts.events_read, t.events_read);
    EXPECT_EQ(s.facts.world_size, t.world_size);
}

TEST(DiagnoseSummary, ThousandSummariesMergeInUnderASecond) {
    // 1,000 ranks, each the summary of the shared trace with the most collectives (rank numbers changed).
    const TraceTables t = read_trace_file(trace_path("hta_nccl_data_rank0.json.gz"));
    RankAnalysis a = analyse_rank(t, 0, SIZE_MAX);
    const fs::path dir = scratch("thousand");
    fs::create_directories(dir);
    for (int r = 0; r < 1000; ++r) {
        a.rank = r;
        std::ofstream(dir / ("rank" + std::to_string(r) + ".json")) << summary_json("rank" + std::to_string(r), t, a);
    }
    const auto t0 = std::chrono::steady_clock::now();
    CliRun merged = run_cli("diagnose --merge " + dir.string() + " --json");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(merged.code, 0);
    EXPECT_NE(merged.out.find("\"ranks\": 1000"), std::string::npos);
#if defined(__SANITIZE_ADDRESS__)
    (void)seconds;  // ASan's run checks the merge, not its speed
#else
    EXPECT_LT(seconds, 1.0) << "whole command, process start included";
#endif
    fs::remove_all(dir);
}

TEST(DiagnoseSummary, NotASummaryIsOneClearError) {
    const fs::path p = scratch("not_a_summary.json");
    std::ofstream(p) << R"({"traceEvents": []})";
    try {
        read_summary(p.string());
        FAIL() << "read a trace as a summary";
    } catch (const ftb::InputError& e) {
        EXPECT_EQ(e.field(), "ftbound_diagnose_summary");
    }
    EXPECT_EQ(run_cli("diagnose --merge " + p.string()).code, 2);
    EXPECT_EQ(run_cli("diagnose " + trace_path(kTraces[2]) + " " + trace_path(kTraces[3]) + " --summary-out " +
                      scratch("two.json").string())
                  .code,
              2);
}
