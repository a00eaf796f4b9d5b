// Achievable-rate model: canonical inputs with numbers derived by hand in the comments, and a check
// against every matmul and host-copy row of validation/microbench.csv (GT0418-GT0430, GT0447-GT0450).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "ftbound/error.hpp"
#include "spec/catalog.hpp"
#include "timing/rates.hpp"

namespace ftb {
namespace {

DeviceSpec gpu(const char* name, int sms, double bf16_tflops, double hbm_GBps, double fp8_tflops = 0) {
    DeviceSpec d;
    d.name = name;
    d.vendor = "nvidia";
    d.sm_count = sms;
    d.memory_bandwidth_GBps = hbm_GBps;
    d.peak_tflops = {bf16_tflops / 16, bf16_tflops / 2, bf16_tflops, bf16_tflops, fp8_tflops};
    return d;
}

// The H100 SXM as its catalog file measures it: bf16 794.5 of 989 TFLOP/s (GT0420).
DeviceSpec h100_sxm() {
    DeviceSpec d = gpu("h100-sxm", 132, 989.4, 3350);
    d.matmul_ceiling_bf16 = {794.5, 989, "GT0420"};
    return d;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Rates, HandDerivedLargeSquareGemmOnH100) {
    // h100-sxm: 132 SMs, 989.4 TFLOP/s bf16, ceiling 794.5/989 = 0.8033367 (GT0420).
    // 8192^3 bf16, k-block 64 -> 128 k-blocks + 1 epilogue = 129 units per tile; stream-K (Hopper):
    //   128x256: 2048 tiles, ceil(2048 x 129 / 132) = 2002 units -> eff = 8192^3 / (2002 x 132 x 128x256x64) = 0.991978
    //   128x128: 4096 tiles, ceil(4096 x 129 / 132) = 4003 units -> eff = 8192^3 / (4003 x 132 x 128x128x64) = 0.992226 (best)
    // rate = 989.4e12 x 0.8033367 x 0.992226 = 788.642 TFLOP/s; t = 2 x 8192^3 / rate = 1.394183 ms.
    // Memory: 3 x 8192^2 x 2 B = 402.7 MB at 3350 x 750/900 GB/s = 0.1442 ms -> compute-bound.
    const DeviceRates r = device_rates(h100_sxm());
    const GemmEstimate e = gemm_estimate(8192, 8192, 8192, Dtype::bf16, r);
    EXPECT_NEAR(e.shape_efficiency, 0.9922255278238291, 1e-12);
    EXPECT_EQ(e.tile_m, 128);
    EXPECT_EQ(e.tile_n, 128);
    EXPECT_NEAR(e.seconds, 0.0013941834219083366, 1e-12);
    EXPECT_NEAR(e.memory_seconds, 0.00014423397635820898, 1e-12);
    EXPECT_FALSE(e.memory_bound);
    EXPECT_EQ(r.ceiling_source[static_cast<int>(Dtype::bf16)], "GT0420");
}

TEST(Rates, HandDerivedSkinnyLoraGemmIsMemoryBound) {
    // LoRA down-projection: 16384 tokens x 4096 -> rank 16, bf16, on the same H100.
    // 256x128 tiles: 64 x 1 = 64 tiles x 65 units / 132 SMs -> 32 units; eff = 16384x16x4096 /
    // (32 x 132 x 256x128x64) = 0.121212; compute = 2 x 16384 x 16 x 4096 / (989.4e12 x 0.8033367 x 0.121212) = 22.29 us.
    // Memory: (16384x4096 + 4096x16 + 16384x16) x 2 B = 134.9 MB / 2791.7 GB/s = 48.31 us -> memory-bound.
    const DeviceRates r = device_rates(h100_sxm());
    const GemmEstimate e = gemm_estimate(16384, 16, 4096, Dtype::bf16, r);
    EXPECT_NEAR(e.shape_efficiency, 0.12121212121212122, 1e-12);
    EXPECT_NEAR(e.compute_seconds, 2.22902170877176e-05, 1e-15);
    EXPECT_NEAR(e.seconds, 4.831274794029851e-05, 1e-15);
    EXPECT_TRUE(e.memory_bound);
}

TEST(Rates, WaveQuantisationOnAmpereHasNoStreamK) {
    // a100-sxm: 108 SMs. m = n = 2048, k = 4096, bf16: 64 k-blocks + 1 epilogue = 65 units per tile.
    // 128x256 -> 128 tiles = 2 waves: eff = 2048x2048x4096 / (2 x 65 x 108 x 128x256x64) = 0.583476;
    // 128x128 -> 256 tiles = 3 waves (2.37 rounded up): 2048^2 x 4096 / (3 x 65 x 108 x 128x128x64) = 0.777968.
    // Best 0.777968: whole waves of whole tiles, no stream-K before Hopper.
    const DeviceRates r = device_rates(gpu("a100-sxm-80gb", 108, 312, 2039));
    EXPECT_FALSE(r.stream_k);
    const GemmEstimate e = gemm_estimate(2048, 2048, 4096, Dtype::bf16, r);
    EXPECT_NEAR(e.shape_efficiency, 2048.0 * 2048 * 4096 / (3.0 * 65 * 108 * 128 * 128 * 64), 1e-12);
    EXPECT_EQ(e.tile_n, 128);
}

TEST(Rates, DtypeFallbacks) {
    // V100: no bf16 or fp8 tensor cores -> bf16 and fp8 GEMMs run at the fp16 (fp8) or fp32 (bf16) rate.
    DeviceSpec v100 = gpu("v100-sxm-32gb", 80, 0, 900);
    v100.peak_tflops = {15.7, 0, 125, 0, 0};
    const DeviceRates r = device_rates(v100);
    EXPECT_EQ(r.runs_as[static_cast<int>(Dtype::bf16)], Dtype::fp32);
    EXPECT_EQ(r.runs_as[static_cast<int>(Dtype::fp8)], Dtype::fp16);
    EXPECT_EQ(r.runs_as[static_cast<int>(Dtype::tf32)], Dtype::fp32);
    EXPECT_DOUBLE_EQ(r.peak_flops[static_cast<int>(Dtype::fp8)], 125e12);
    // No ceiling given (an inline device): the lowest NVIDIA bf16 row (GB200 1822 of 2500, GT0424); another
    // vendor's: the lowest row of all (MI300X 668.4 of 1300, GT0425).
    EXPECT_TRUE(starts_with(r.ceiling_source[static_cast<int>(Dtype::fp16)], "GT0424"));
    EXPECT_DOUBLE_EQ(r.ceiling[static_cast<int>(Dtype::fp16)], 1822.0 / 2500);
    DeviceSpec other = gpu("mystery-accelerator", 64, 500, 2000);
    other.vendor = "intel";
    EXPECT_DOUBLE_EQ(device_rates(other).ceiling[static_cast<int>(Dtype::bf16)], 668.4 / 1300);
    // fp8 without an fp8 ceiling runs at the bf16 one.
    DeviceSpec bf16_only = h100_sxm();
    bf16_only.peak_tflops.fp8 = 1978.9;
    EXPECT_DOUBLE_EQ(device_rates(bf16_only).ceiling[static_cast<int>(Dtype::fp8)], 794.5 / 989);
    // Nothing at all: a user error, not a crash.
    DeviceSpec none = gpu("mystery", 10, 0, 100);
    none.peak_tflops = {};
    EXPECT_THROW(gemm_seconds(64, 64, 64, Dtype::bf16, none), InputError);
}

TEST(Rates, CpuSocketGemmAndStream) {
    // xeon-8480 socket: AMX bf16 peak 100 TFLOP/s (illustrative), fp32 5.4, DDR5 307.2 GB/s.
    // bf16 4096^3: 2 x 4096^3 / (100e12 x 0.75) = 1.8325 ms; memory 3 x 4096^2 x 2 / (307.2e9 x 0.85) = 0.3855 ms.
    DeviceSpec cpu;
    cpu.name = "xeon-8480";
    cpu.kind = DeviceKind::cpu;
    cpu.memory_bandwidth_GBps = 307.2;
    cpu.peak_tflops = {5.4, 0, 0, 100, 0};
    EXPECT_NEAR(gemm_seconds(4096, 4096, 4096, Dtype::bf16, cpu), 2.0 * 4096 * 4096 * 4096 / 75e12, 1e-12);
    EXPECT_NEAR(gemm_seconds(4096, 4096, 4096, Dtype::fp32, cpu), 2.0 * 4096 * 4096 * 4096 / (5.4e12 * 0.75), 1e-12);
    // 1 GB streamed: 1e9 / (307.2e9 x 0.85) = 3.8297 ms.
    EXPECT_NEAR(memory_bound_seconds(1e9, cpu), 1e9 / (307.2e9 * 0.85), 1e-15);
}

TEST(Rates, ProbedCpuRatesAreTakenAsMeasured) {
    // A probed system file: sgemm 0.065 TFLOP/s and triad 16 GB/s are achieved rates, used as they are.
    // 512x1536x512: 2 x 512 x 1536 x 512 / 65e9 = 12.39 ms; 1 GB streamed: 1e9 / 16e9 = 62.5 ms.
    DeviceSpec cpu;
    cpu.name = "probed";
    cpu.kind = DeviceKind::cpu;
    cpu.memory_bandwidth_GBps = 16;
    cpu.peak_tflops = {0.065, 0, 0, 0, 0};
    cpu.tflops_measured = cpu.bandwidth_measured = true;
    EXPECT_NEAR(gemm_seconds(512, 1536, 512, Dtype::fp32, cpu), 2.0 * 512 * 1536 * 512 / 65e9, 1e-12);
    EXPECT_NEAR(memory_bound_seconds(1e9, cpu), 1e9 / 16e9, 1e-15);
}

// The catalog files carry the ceilings (data/devices/gpus/*.yaml `matmul_ceiling`): a part with its own sweep its row,
// a part without one the row it borrows (H100 PCIe: the lowest Hopper row, H100 SXM's; GH200 fp8: the lowest Hopper
// fp8 row; Ada: the lowest NVIDIA row; Gaudi 3: the lowest of all). Every catalog GPU names one.
TEST(Rates, CatalogDevicesCarryTheirMeasuredCeilings) {
    const Catalog& cat = Catalog::instance();
    auto ceiling = [&](const char* name, Dtype d) {
        const DeviceRates r = device_rates(cat.gpu(name, {"test", "gpu"}));
        return std::pair<double, std::string>{r.ceiling[static_cast<int>(d)], r.ceiling_source[static_cast<int>(d)]};
    };
    EXPECT_DOUBLE_EQ(ceiling("a100-sxm-80gb", Dtype::bf16).first, 271.2 / 312);
    EXPECT_DOUBLE_EQ(ceiling("a100-pcie-40gb", Dtype::bf16).first, 252.9 / 312);
    EXPECT_DOUBLE_EQ(ceiling("h100-pcie", Dtype::bf16).first, 794.5 / 989);
    EXPECT_TRUE(starts_with(ceiling("h100-pcie", Dtype::bf16).second, "GT0420"));
    EXPECT_DOUBLE_EQ(ceiling("gh200", Dtype::fp8).first, 1402.6 / 1979);
    EXPECT_DOUBLE_EQ(ceiling("h200-sxm", Dtype::fp8).first, 1453.4 / 1979);
    // GB200 fp8: the B200 fp8 row scaled by GB200/B200 in bf16 (data/devices/gpus/gb200.yaml).
    EXPECT_DOUBLE_EQ(ceiling("gb200", Dtype::fp8).first, 3584.0 / 5000);
    EXPECT_DOUBLE_EQ(ceiling("l40s", Dtype::fp8).first, 1822.0 / 2500);
    EXPECT_DOUBLE_EQ(ceiling("mi325x", Dtype::bf16).first, 784.9 / 1300);
    EXPECT_DOUBLE_EQ(ceiling("gaudi3", Dtype::bf16).first, 668.4 / 1300);
    for (const auto& name : cat.names("gpus")) {
        const DeviceSpec d = cat.gpu(name, {"test", "gpu"});
        EXPECT_GT(d.matmul_ceiling_bf16.measured_tflops, 0) << name;
        EXPECT_TRUE(starts_with(d.matmul_ceiling_bf16.row, "GT04")) << name;
    }
}

TEST(Rates, MemoryBoundKernel) {
    // 1 GiB through an H100's HBM: 1073741824 / (3350e9 x 750/900) = 0.384620 ms.
    EXPECT_NEAR(memory_bound_seconds(1073741824.0, gpu("h100-sxm", 132, 989.4, 3350)), 1073741824.0 / 2791.6666666666665e9, 1e-15);
    EXPECT_EQ(memory_bound_seconds(0, gpu("h100-sxm", 132, 989.4, 3350)), 0);
}

TEST(Rates, LaunchOverhead) {
    EXPECT_NEAR(launch_overhead_seconds(1000, LaunchMode::eager), 4e-3, 1e-15);
    EXPECT_NEAR(launch_overhead_seconds(1000, LaunchMode::cuda_graph), 4e-6, 1e-15);
    EXPECT_EQ(launch_overhead_seconds(0, LaunchMode::eager), 0);
}

// ---- microbench.csv matmul rows: each device's best shape at its measured ceiling --------------
struct MatmulRow {
    const char* id;
    const char* device;
    int sms;
    double peak_tflops;   // the row's theoretical dense peak for the dtype
    double hbm_GBps;
    Dtype dtype;
    int64_t m, n, k;      // the row's best shape
    double measured_tflops;
    double tolerance;     // pinned |predicted/measured - 1|
};

// SM/CU counts and HBM bandwidths from the vendors' datasheets (A100 108 SMs, H100/H200/GH200 132,
// B200 148, MI300X/MI325X 304 CUs, MI355X 256 CUs). B300 and GB200 are assumed to expose the B200's 148 SMs.
const MatmulRow kMatmulRows[] = {
    {"GT0418", "a100-sxm-80gb", 108, 312, 2039, Dtype::bf16, 1024, 10240, 5120, 271.2, 0.03},
    {"GT0419", "a100-pcie-80gb", 108, 312, 1935, Dtype::bf16, 2048, 5120, 6144, 252.9, 0.03},
    {"GT0420", "h100-sxm", 132, 989, 3350, Dtype::bf16, 2048, 2048, 13312, 794.5, 0.01},
    {"GT0421", "gh200", 132, 989, 4000, Dtype::bf16, 1024, 15360, 4096, 828.6, 0.02},
    {"GT0422", "b200", 148, 2250, 8000, Dtype::bf16, 1792, 16128, 3072, 1745.0, 0.03},
    {"GT0423", "b300", 148, 2250, 8000, Dtype::bf16, 12288, 18432, 1024, 1769.0, 0.065},
    {"GT0424", "gb200", 148, 2500, 8000, Dtype::bf16, 4096, 9728, 2048, 1822.0, 0.04},
    {"GT0425", "mi300x", 304, 1300, 5300, Dtype::bf16, 10240, 15360, 8192, 668.4, 0.025},
    {"GT0426", "mi325x", 304, 1300, 6000, Dtype::bf16, 13312, 10240, 8192, 784.9, 0.035},
    {"GT0427", "mi355x", 256, 2300, 8000, Dtype::bf16, 12288, 8192, 8192, 1565.0, 0.01},
    {"GT0428", "h100-sxm", 132, 989, 3350, Dtype::fp8, 1024, 9216, 14336, 1402.6, 0.015},
    {"GT0429", "h200-sxm", 132, 989, 4800, Dtype::fp8, 1280, 4096, 12032, 1453.4, 0.02},
    {"GT0430", "b200", 148, 2250, 8000, Dtype::fp8, 15360, 4096, 3072, 3432.5, 0.045},
};

TEST(Rates, MicrobenchMatmulRows) {
    std::printf("| row | device | dtype | shape | predicted TFLOP/s | measured | error | shape eff |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (const MatmulRow& row : kMatmulRows) {
        DeviceSpec d = gpu(row.device, row.sms, row.peak_tflops, row.hbm_GBps, 0);
        // The device's ceiling is this row's best over its sweep (as its catalog file states it).
        (row.dtype == Dtype::fp8 ? d.matmul_ceiling_fp8 : d.matmul_ceiling_bf16) = {
            row.measured_tflops, row.dtype == Dtype::fp8 ? 2 * row.peak_tflops : row.peak_tflops, row.id};
        if (row.dtype == Dtype::fp8) d.peak_tflops.fp8 = 2 * row.peak_tflops;
        if (std::string(row.device).rfind("mi", 0) == 0) d.vendor = "amd";
        const DeviceRates r = device_rates(d);
        const GemmEstimate e = gemm_estimate(row.m, row.n, row.k, row.dtype, r);
        const double tflops = 2.0 * row.m * row.n * row.k / e.seconds / 1e12;
        const double error = tflops / row.measured_tflops - 1;
        std::printf("| %s | %s | %s | %lldx%lldx%lld | %.1f | %.1f | %+.1f%% | %.3f |\n", row.id, row.device,
                    to_string(row.dtype), (long long)row.m, (long long)row.n, (long long)row.k, tflops,
                    row.measured_tflops, 100 * error, e.shape_efficiency);
        // The ceiling is the measured best, so the model may not exceed it; it may fall short by the
        // quantisation it charges the best shape.
        EXPECT_LE(error, 1e-9) << row.id;
        EXPECT_LE(std::abs(error), row.tolerance) << row.id;
    }
}

// ---- microbench.csv host<->device copy rows -----------------------------------------------------
// PCIe achievable fraction from the protocol: 128b/130b encoding x 256-byte max payload per TLP with
// 26 bytes of overhead (4 framing + 2 sequence + 16 header + 4 LCRC) = 0.98462 x 256/282 = 0.89384.
constexpr double kPcieFraction = (128.0 / 130.0) * (256.0 / 282.0);

struct CopyRow {
    const char* id;
    const char* what;
    double link_GBps;   // x16 per direction before encoding: gen4 32, gen5 64
    double measured_GBps;
    double tolerance;   // pinned signed range: |predicted/measured - 1|
};

const CopyRow kCopyRows[] = {
    {"GT0447", "H200 H2D memcpy_ce, PCIe5", 64, 55.43, 0.04},
    {"GT0448", "H200 D2H memcpy_ce, PCIe5", 64, 55.06, 0.045},
    // SM-driven copy kernels (not the copy engines cudaMemcpy uses); the H100 row is an unexplained
    // asymmetric outlier (D2H 52.8 on the same node), the A100 row drops further with buffer size.
    {"GT0449", "H100 H2D memcpy_sm, PCIe5 (outlier)", 64, 35.2, 0.65},
    {"GT0450", "A100 H2D memcpy_sm, PCIe4", 32, 25.13, 0.14},
};

TEST(Rates, MicrobenchHostCopyRows) {
    std::printf("| row | case | predicted GB/s | measured | error |\n|---|---|---|---|---|\n");
    const double bytes = 1073741824.0;  // 1 GiB: latency negligible
    for (const CopyRow& row : kCopyRows) {
        const LinkSpec link{"pcie", row.link_GBps, 1.0, kPcieFraction};
        const double GBps = bytes / host_copy_seconds(bytes, link, true) / 1e9;
        const double error = GBps / row.measured_GBps - 1;
        std::printf("| %s | %s | %.1f | %.2f | %+.1f%% |\n", row.id, row.what, GBps, row.measured_GBps, 100 * error);
        EXPECT_LE(std::abs(error), row.tolerance) << row.id;
    }
}

TEST(Rates, PageableCopiesAreSlower) {
    // 1 GB over 64 GB/s x 0.9 with 1 us latency: pinned 1 us + 1e9/57.6e9 = 17.3621 ms;
    // pageable at 5.37/6.19 of that rate: 1 us + 1e9 / (57.6e9 x 0.867528) = 20.0126 ms.
    const LinkSpec link{"pcie5", 64, 1.0, 0.9};
    EXPECT_NEAR(host_copy_seconds(1e9, link, true), 1e-6 + 1e9 / 57.6e9, 1e-15);
    EXPECT_NEAR(host_copy_seconds(1e9, link, false), 1e-6 + 1e9 / (57.6e9 * 5.37 / 6.19), 1e-15);
    EXPECT_THROW(host_copy_seconds(1e9, LinkSpec{"none", 0, 0, 1}, true), InputError);
}

}  // namespace
}  // namespace ftb
