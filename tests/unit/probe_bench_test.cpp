// Host and storage measurements at small sizes: results are correct and carry their samples; storage
// figures do not come from the page cache.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "probe/bf16_gemm.hpp"
#include "probe/host_bench.hpp"
#include "probe/storage_bench.hpp"
#include "ftbound/error.hpp"

using namespace ftb::probe;

TEST(ProbeBench, TriadKeepsEverySample) {
    Measurement m = triad_bandwidth_GBps(2, 8.0 * 1024 * 1024, 4);
    ASSERT_EQ(m.samples.size(), 4u);
    for (double s : m.samples) {
        EXPECT_TRUE(std::isfinite(s));
        EXPECT_GT(s, 0.1);  // any machine streams more than 100 MB/s
    }
    EXPECT_GE(m.median(), *std::min_element(m.samples.begin(), m.samples.end()));
}

TEST(ProbeBench, FirstTouchKeepsEverySample) {
    Measurement m = first_touch_GBps(2, 16.0 * 1024 * 1024, 3);
    ASSERT_EQ(m.samples.size(), 3u);
    for (double s : m.samples) {
        EXPECT_TRUE(std::isfinite(s));
        EXPECT_GT(s, 0.05);  // page faults and zeroing still fill more than 50 MB/s
    }
}

TEST(ProbeBench, MedianOfEvenAndOddCounts) {
    EXPECT_DOUBLE_EQ(measurement_of({3, 1, 2}).median(), 2);
    EXPECT_DOUBLE_EQ(measurement_of({4, 1, 3, 2}).median(), 2.5);
    EXPECT_DOUBLE_EQ(Measurement{}.median(), 0);
}

TEST(ProbeBench, Bf16RoundTrip) {
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
    // 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1.0).
    EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), 0x3f80);
    EXPECT_EQ(float_to_bf16(1.0f + 3.0f / 256), 0x3f82);  // 1.01171875 -> 1.015625
    EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
}

TEST(ProbeBench, Bf16GemmMatchesReference) {
    if (!cpu_has_avx512_bf16()) GTEST_SKIP() << "CPU has no AVX512-BF16";
    const int M = 13, N = 64, K = 38;  // M not a multiple of the 6-row kernel: exercises the tail
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<uint16_t> A(M * K), B(K * N);
    for (auto& x : A) x = float_to_bf16(dist(rng));
    for (auto& x : B) x = float_to_bf16(dist(rng));
    std::vector<float> C(M * N, -99.0f);
    bf16_gemm(A.data(), B.data(), C.data(), M, N, K, 2);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double ref = 0;
            for (int k = 0; k < K; ++k) ref += double(bf16_to_float(A[i * K + k])) * bf16_to_float(B[k * N + j]);
            ASSERT_NEAR(C[i * N + j], ref, 1e-3) << i << "," << j;  // products exact in fp32, sums in fp32
        }
}

TEST(ProbeBench, Bf16GemmRejectsBadShapes) {
    if (!cpu_has_avx512_bf16()) GTEST_SKIP() << "CPU has no AVX512-BF16";
    std::vector<uint16_t> A(4 * 4), B(4 * 30);
    std::vector<float> C(4 * 30);
    EXPECT_THROW(bf16_gemm(A.data(), B.data(), C.data(), 4, 30, 4, 1), ftb::InternalError);
}

namespace {
std::filesystem::path scratch_dir() {
    // Under the build tree (a disk), not /tmp (often tmpfs, which refuses O_DIRECT).
    auto p = std::filesystem::current_path() / ("probe-storage-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p;
}
}  // namespace

TEST(ProbeStorage, DirectIoBypassesThePageCache) {
    auto dir = scratch_dir();
    StorageBenchOptions opt;
    opt.file_bytes = 16.0 * 1024 * 1024;
    opt.block_bytes = 1.0 * 1024 * 1024;
    opt.repetitions = 2;
    StorageBench sb = run_storage_bench(dir.string(), opt);
    size_t left = std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{});
    std::filesystem::remove_all(dir);
    EXPECT_EQ(left, 0u) << "the scratch file must be removed";
    if (!sb.measured) GTEST_SKIP() << sb.skipped_reason;
    ASSERT_EQ(sb.read_GBps.samples.size(), 2u);
    ASSERT_EQ(sb.write_GBps.samples.size(), 2u);
    EXPECT_GT(sb.read_GBps.median(), 0);
    EXPECT_LT(sb.page_cache_resident_fraction, 0.01);
}

TEST(ProbeStorage, ResidencyCheckSeesBufferedWrites) {
    // The check that guards the storage figures must be able to fail: a buffered write stays cached.
    auto dir = scratch_dir();
    auto file = dir / "buffered.bin";
    {
        std::ofstream f(file, std::ios::binary);
        std::string block(1 << 20, 'x');
        for (int i = 0; i < 8; ++i) f << block;
    }
    double cached = page_cache_resident_fraction(file.string());
    std::filesystem::remove_all(dir);
    EXPECT_GT(cached, 0.5);
}

TEST(ProbeStorage, MissingFolderIsAnInputError) {
    EXPECT_THROW(run_storage_bench("/nonexistent-ftbound-dir", StorageBenchOptions{}), ftb::InputError);
}
