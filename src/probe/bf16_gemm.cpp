#include "probe/bf16_gemm.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "ftbound/error.hpp"

namespace ftb::probe {

uint16_t float_to_bf16(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN stays NaN
    uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_to_float(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
}

bool cpu_has_avx512_bf16() {
    unsigned a, b, c, d;
    // Leaf 7 subleaf 1, EAX bit 5: AVX512_BF16 (Intel SDM vol. 2A, CPUID). Also needs AVX512F (leaf 7.0 EBX bit 16)
    // and the OS saving ZMM state (XCR0 bits 5-7), which __builtin_cpu_supports checks.
    if (!__builtin_cpu_supports("avx512f")) return false;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 1, a, b, c, d);
    return (a >> 5) & 1u;
}

namespace {

constexpr int kRows = 6;     // rows of C per micro-kernel call
constexpr int kCols = 32;    // columns of C per micro-kernel call (two zmm registers of fp32)

// B packed per 32-column panel in VNNI order: for each k pair p, 32 columns x (B[2p][n], B[2p+1][n]).
void pack_b(const uint16_t* B, uint32_t* packed, int N, int K) {
    int pairs = K / 2;
    for (int panel = 0; panel < N / kCols; ++panel) {
        uint32_t* dst = packed + static_cast<size_t>(panel) * pairs * kCols;
        for (int p = 0; p < pairs; ++p)
            for (int n = 0; n < kCols; ++n) {
                int col = panel * kCols + n;
                uint32_t lo = B[static_cast<size_t>(2 * p) * N + col];
                uint32_t hi = B[static_cast<size_t>(2 * p + 1) * N + col];
                dst[static_cast<size_t>(p) * kCols + n] = lo | (hi << 16);
            }
    }
}

template <int R>
__attribute__((target("avx512f,avx512bf16"))) void micro_kernel(const uint16_t* A, int K, const uint32_t* panel,
                                                                 float* C, int N) {
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    int pairs = K / 2;
    for (int p = 0; p < pairs; ++p) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(panel + static_cast<size_t>(p) * kCols);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512(panel + static_cast<size_t>(p) * kCols + 16);
        for (int r = 0; r < R; ++r) {
            uint32_t a_pair;
            std::memcpy(&a_pair, A + static_cast<size_t>(r) * K + 2 * p, 4);
            __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(a_pair));
            acc0[r] = _mm512_dpbf16_ps(acc0[r], a, b0);
            acc1[r] = _mm512_dpbf16_ps(acc1[r], a, b1);
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_storeu_ps(C + static_cast<size_t>(r) * N, acc0[r]);
        _mm512_storeu_ps(C + static_cast<size_t>(r) * N + 16, acc1[r]);
    }
}

void run_rows(const uint16_t* A, const uint32_t* panel, float* C, int rows, int N, int K) {
    switch (rows) {
        case 6: micro_kernel<6>(A, K, panel, C, N); break;
        case 5: micro_kernel<5>(A, K, panel, C, N); break;
        case 4: micro_kernel<4>(A, K, panel, C, N); break;
        case 3: micro_kernel<3>(A, K, panel, C, N); break;
        case 2: micro_kernel<2>(A, K, panel, C, N); break;
        default: micro_kernel<1>(A, K, panel, C, N); break;
    }
}

}  // namespace

void bf16_gemm(const uint16_t* A, const uint16_t* B, float* C, int M, int N, int K, int threads) {
    if (!cpu_has_avx512_bf16()) throw InternalError("bf16_gemm called on a CPU without AVX512-BF16");
    if (M <= 0 || N <= 0 || K <= 0 || N % kCols != 0 || K % 2 != 0)
        throw InternalError("bf16_gemm: N must be a multiple of 32 and K even");
    int panels = N / kCols;
    std::vector<uint32_t> packed(static_cast<size_t>(panels) * (K / 2) * kCols);
    pack_b(B, packed.data(), N, K);
    if (threads < 1) threads = 1;
    threads = std::min(threads, panels);
    // Each thread owns a contiguous range of column panels; its B panel stays in its L2 while A streams by.
    auto work = [&](int t) {
        int first = panels * t / threads, last = panels * (t + 1) / threads;
        for (int panel = first; panel < last; ++panel) {
            const uint32_t* bp = packed.data() + static_cast<size_t>(panel) * (K / 2) * kCols;
            for (int i = 0; i < M; i += kRows) {
                int rows = std::min(kRows, M - i);
                run_rows(A + static_cast<size_t>(i) * K, bp, C + static_cast<size_t>(i) * N + panel * kCols, rows, N, K);
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
}

}  // namespace ftb::probe
