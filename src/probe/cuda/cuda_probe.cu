// GPU measurements for `ftbound probe`: host<->device copies (pinned and pageable), device-to-device
// (HBM) copies, GPU-to-GPU copies, GEMM rates through cuBLAS / cuBLASLt, and NCCL all-reduce and
// all-gather bus bandwidth across the local GPUs. Results go back to ftbound as JSON (cuda_probe_api.h).
#include "cuda_probe_api.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#ifdef FTB_HAVE_NCCL
#include <nccl.h>
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const double kGB = 1e9;

// ---- a tiny JSON writer (the document is flat and small) ----
std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\', out += c;
        else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else out += c;
    }
    return out + "\"";
}
std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}
std::string array(const std::vector<double>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + num(v[i]);
    return s + "]";
}

struct Failure {
    std::string what;
};
void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Failure{std::string(what) + ": " + cudaGetErrorString(e)};
}
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw Failure{std::string(what) + ": cublas status " + std::to_string(static_cast<int>(s))};
}

// Device buffers filled with small pseudo-random values: all-zero operands let the GPU save power
// and clock higher than it would on real data.
template <typename T>
__global__ void fill_kernel(T* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        float v = (static_cast<float>(h & 0xffff) / 65535.0f - 0.5f) * 0.5f;
        p[i] = T(v);
    }
}
template <typename T>
void fill(T* p, size_t n, unsigned seed) {
    fill_kernel<T><<<1024, 256>>>(p, n, seed);
    check(cudaGetLastError(), "fill kernel launch");
}

struct Events {
    cudaEvent_t a{}, b{};
    Events() {
        check(cudaEventCreate(&a), "cudaEventCreate");
        check(cudaEventCreate(&b), "cudaEventCreate");
    }
    ~Events() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    template <typename F>
    double seconds(cudaStream_t s, F&& work) {
        check(cudaEventRecord(a, s), "cudaEventRecord");
        work();
        check(cudaEventRecord(b, s), "cudaEventRecord");
        check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        return ms / 1e3;
    }
};

struct Sizes {
    size_t copy_bytes;
    size_t d2d_bytes;
    int reps;
    int gemm_reps;
    size_t nccl_bytes;
};

std::vector<double> time_copies(cudaStream_t s, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, int reps,
                                double traffic_factor) {
    Events ev;
    check(cudaMemcpyAsync(dst, src, bytes, kind, s), "warm-up copy");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    std::vector<double> out;
    for (int r = 0; r < reps; ++r) {
        double t = ev.seconds(s, [&] { check(cudaMemcpyAsync(dst, src, bytes, kind, s), "cudaMemcpyAsync"); });
        out.push_back(traffic_factor * static_cast<double>(bytes) / t / kGB);
    }
    return out;
}

struct GemmShape {
    int m, n, k;
};

std::string gemm_json(const char* dtype, const char* library, const GemmShape& g, const std::vector<double>& tflops,
                      const std::string& error) {
    std::string s = "{\"dtype\":" + quote(dtype) + ",\"library\":" + quote(library) + ",\"m\":" + std::to_string(g.m) +
                    ",\"n\":" + std::to_string(g.n) + ",\"k\":" + std::to_string(g.k);
    if (!error.empty()) return s + ",\"error\":" + quote(error) + "}";
    return s + ",\"tflops\":" + array(tflops) + "}";
}

// cublasGemmEx for fp32, tf32, fp16, bf16 (fp32 accumulation).
std::string cublas_gemm(cublasHandle_t h, cudaStream_t s, const char* dtype, const GemmShape& g, int reps) {
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    size_t elem = 4;
    if (!std::strcmp(dtype, "tf32")) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (!std::strcmp(dtype, "fp16")) type = CUDA_R_16F, elem = 2;
    else if (!std::strcmp(dtype, "bf16")) type = CUDA_R_16BF, elem = 2;
    void *A = nullptr, *B = nullptr, *C = nullptr;
    std::string error;
    std::vector<double> tflops;
    try {
        check(cudaMalloc(&A, elem * g.m * static_cast<size_t>(g.k)), "cudaMalloc A");
        check(cudaMalloc(&B, elem * g.k * static_cast<size_t>(g.n)), "cudaMalloc B");
        check(cudaMalloc(&C, elem * g.m * static_cast<size_t>(g.n)), "cudaMalloc C");
        size_t na = static_cast<size_t>(g.m) * g.k, nb = static_cast<size_t>(g.k) * g.n;
        if (elem == 4) fill(static_cast<float*>(A), na, 1), fill(static_cast<float*>(B), nb, 2);
        else if (type == CUDA_R_16F) fill(static_cast<__half*>(A), na, 1), fill(static_cast<__half*>(B), nb, 2);
        else fill(static_cast<__nv_bfloat16*>(A), na, 1), fill(static_cast<__nv_bfloat16*>(B), nb, 2);
        float alpha = 1.0f, beta = 0.0f;
        auto run = [&] {
            check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &alpha, A, type, g.m, B, type, g.k, &beta, C,
                               type, g.m, compute, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
        };
        Events ev;
        for (int w = 0; w < 3; ++w) run();
        for (int r = 0; r < reps; ++r) tflops.push_back(2.0 * g.m * g.n * static_cast<double>(g.k) / ev.seconds(s, run) / 1e12);
    } catch (const Failure& f) {
        error = f.what;
    }
    cudaFree(A), cudaFree(B), cudaFree(C);
    cudaGetLastError();  // a failed allocation must not poison the next measurement
    return gemm_json(dtype, "cublas", g, tflops, error);
}

// FP8 (E4M3) through cuBLASLt: needs compute capability 8.9 or newer and the "TN" layout
// (A transposed, B not) that cuBLASLt requires for FP8 (cuBLAS documentation, cublasLtMatmul).
std::string cublaslt_fp8_gemm(cublasLtHandle_t lt, cudaStream_t s, const GemmShape& g, int reps) {
    void *A = nullptr, *B = nullptr, *D = nullptr, *workspace = nullptr;
    const size_t workspace_bytes = 64ull << 20;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    std::string error;
    std::vector<double> tflops;
    try {
        check(cudaMalloc(&A, static_cast<size_t>(g.m) * g.k), "cudaMalloc A");
        check(cudaMalloc(&B, static_cast<size_t>(g.k) * g.n), "cudaMalloc B");
        check(cudaMalloc(&D, 2 * static_cast<size_t>(g.m) * g.n), "cudaMalloc D");
        check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc workspace");
        fill(static_cast<__nv_fp8_e4m3*>(A), static_cast<size_t>(g.m) * g.k, 3);
        fill(static_cast<__nv_fp8_e4m3*>(B), static_cast<size_t>(g.k) * g.n, 4);
        check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "set TRANSA");
        check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "set TRANSB");
        check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, g.k, g.m, g.k), "layout A");
        check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, g.k, g.n, g.k), "layout B");
        check(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, g.m, g.n, g.m), "layout D");
        check(cublasLtMatmulPreferenceCreate(&pref), "preference");
        check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                   sizeof workspace_bytes),
              "preference workspace");
        cublasLtMatmulHeuristicResult_t heuristic{};
        int found = 0;
        check(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found), "heuristic");
        if (found == 0) throw Failure{"cuBLASLt has no FP8 algorithm for this shape"};
        float alpha = 1.0f, beta = 0.0f;
        auto run = [&] {
            check(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heuristic.algo, workspace,
                                 workspace_bytes, s),
                  "cublasLtMatmul");
        };
        Events ev;
        for (int w = 0; w < 3; ++w) run();
        for (int r = 0; r < reps; ++r) tflops.push_back(2.0 * g.m * g.n * static_cast<double>(g.k) / ev.seconds(s, run) / 1e12);
    } catch (const Failure& f) {
        error = f.what;
    }
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (op) cublasLtMatmulDescDestroy(op);
    cudaFree(A), cudaFree(B), cudaFree(D), cudaFree(workspace);
    cudaGetLastError();
    return gemm_json("fp8", "cublaslt", g, tflops, error);
}

std::string probe_device(int dev, const Sizes& sz) {
    check(cudaSetDevice(dev), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, dev);
    std::string out = "{\"index\":" + std::to_string(dev) + ",\"name\":" + quote(prop.name) +
                      ",\"pci_bus_id\":" + quote(bus) + ",\"memory_bytes\":" + num(static_cast<double>(prop.totalGlobalMem)) +
                      ",\"cc_major\":" + std::to_string(prop.major) + ",\"cc_minor\":" + std::to_string(prop.minor);
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");

    // Host <-> device.
    void *pinned = nullptr, *device = nullptr, *device2 = nullptr;
    void* pageable = std::malloc(sz.copy_bytes);
    if (!pageable) throw Failure{"host malloc failed"};
    std::memset(pageable, 1, sz.copy_bytes);  // touch the pages so first-touch faults are not timed
    check(cudaMallocHost(&pinned, sz.copy_bytes), "cudaMallocHost");
    std::memset(pinned, 1, sz.copy_bytes);
    check(cudaMalloc(&device, sz.d2d_bytes), "cudaMalloc");
    check(cudaMalloc(&device2, sz.d2d_bytes), "cudaMalloc");
    check(cudaMemset(device, 0, sz.d2d_bytes), "cudaMemset");
    check(cudaMemset(device2, 0, sz.d2d_bytes), "cudaMemset");
    out += ",\"h2d_pinned_GBps\":" + array(time_copies(s, device, pinned, sz.copy_bytes, cudaMemcpyHostToDevice, sz.reps, 1));
    out += ",\"d2h_pinned_GBps\":" + array(time_copies(s, pinned, device, sz.copy_bytes, cudaMemcpyDeviceToHost, sz.reps, 1));
    out += ",\"h2d_pageable_GBps\":" + array(time_copies(s, device, pageable, sz.copy_bytes, cudaMemcpyHostToDevice, sz.reps, 1));
    out += ",\"d2h_pageable_GBps\":" + array(time_copies(s, pageable, device, sz.copy_bytes, cudaMemcpyDeviceToHost, sz.reps, 1));
    // Device to device: every byte is read once and written once.
    out += ",\"d2d_GBps\":" + array(time_copies(s, device2, device, sz.d2d_bytes, cudaMemcpyDeviceToDevice, sz.reps, 2));
    {
        // Latency of a small pinned copy: the mean of 100 back-to-back 4-byte copies per sample.
        Events ev;
        std::vector<double> lat;
        for (int r = 0; r < sz.reps; ++r) {
            double t = ev.seconds(s, [&] {
                for (int i = 0; i < 100; ++i) check(cudaMemcpyAsync(device, pinned, 4, cudaMemcpyHostToDevice, s), "small copy");
            });
            lat.push_back(t / 100 * 1e6);
        }
        out += ",\"h2d_latency_us\":" + array(lat);
    }
    std::free(pageable);
    cudaFreeHost(pinned);
    cudaFree(device);
    cudaFree(device2);

    // GEMM rates. Shapes: two squares and the MLP up-projection of an 8B Llama layer at 8192 tokens
    // (hidden 4096, intermediate 14336; meta-llama/Llama-3.1-8B config.json).
    std::vector<GemmShape> shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 14336, 4096}};
    cublasHandle_t h;
    check(cublasCreate(&h), "cublasCreate");
    check(cublasSetStream(h, s), "cublasSetStream");
    std::string gemms;
    for (const char* dtype : {"fp32", "tf32", "fp16", "bf16"})
        for (const auto& g : shapes) gemms += (gemms.empty() ? "" : ",") + cublas_gemm(h, s, dtype, g, sz.gemm_reps);
    cublasDestroy(h);
    bool fp8_capable = prop.major > 8 || (prop.major == 8 && prop.minor >= 9);
    if (fp8_capable) {
        cublasLtHandle_t lt;
        check(cublasLtCreate(&lt), "cublasLtCreate");
        for (const auto& g : shapes) gemms += "," + cublaslt_fp8_gemm(lt, s, g, sz.gemm_reps);
        cublasLtDestroy(lt);
    }
    out += ",\"gemm\":[" + gemms + "]";
    cudaStreamDestroy(s);
    return out + "}";
}

std::string probe_peers(int count, const Sizes& sz) {
    std::string out;
    for (int src = 0; src < count; ++src)
        for (int dst = 0; dst < count; ++dst) {
            if (src == dst) continue;
            int can = 0;
            cudaDeviceCanAccessPeer(&can, dst, src);
            void *a = nullptr, *b = nullptr;
            std::string entry = "{\"src\":" + std::to_string(src) + ",\"dst\":" + std::to_string(dst) +
                                ",\"peer_access\":" + (can ? "true" : "false");
            try {
                check(cudaSetDevice(src), "cudaSetDevice");
                if (can) {
                    cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
                    if (e != cudaErrorPeerAccessAlreadyEnabled) check(e, "cudaDeviceEnablePeerAccess");
                }
                check(cudaMalloc(&a, sz.copy_bytes), "cudaMalloc");
                check(cudaSetDevice(dst), "cudaSetDevice");
                check(cudaMalloc(&b, sz.copy_bytes), "cudaMalloc");
                check(cudaSetDevice(src), "cudaSetDevice");
                cudaStream_t s;
                check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
                Events ev;
                check(cudaMemcpyPeerAsync(b, dst, a, src, sz.copy_bytes, s), "warm-up peer copy");
                check(cudaStreamSynchronize(s), "sync");
                std::vector<double> bw;
                for (int r = 0; r < sz.reps; ++r) {
                    double t = ev.seconds(s, [&] { check(cudaMemcpyPeerAsync(b, dst, a, src, sz.copy_bytes, s), "peer copy"); });
                    bw.push_back(static_cast<double>(sz.copy_bytes) / t / kGB);
                }
                cudaStreamDestroy(s);
                entry += ",\"GBps\":" + array(bw) + "}";
            } catch (const Failure& f) {
                entry += ",\"error\":" + quote(f.what) + "}";
            }
            cudaSetDevice(src);
            cudaFree(a);
            cudaSetDevice(dst);
            cudaFree(b);
            cudaGetLastError();
            out += (out.empty() ? "" : ",") + entry;
        }
    return "[" + out + "]";
}

#ifdef FTB_HAVE_NCCL
void nccl_check(ncclResult_t r, const char* what) {
    if (r != ncclSuccess) throw Failure{std::string(what) + ": " + ncclGetErrorString(r)};
}

// One process driving all local GPUs (ncclCommInitAll). busbw as nccl-tests defines it
// (nccl-tests doc/PERFORMANCE.md): all-reduce algbw x 2(n-1)/n, all-gather algbw x (n-1)/n,
// where algbw = bytes / time and bytes is the buffer size (all-gather: the gathered output).
std::string probe_nccl(int count, const Sizes& sz, std::string& skipped) {
    if (count < 2) {
        skipped = "one GPU: no collective to measure";
        return "[]";
    }
    std::vector<ncclComm_t> comms(count);
    std::vector<int> devs(count);
    for (int i = 0; i < count; ++i) devs[i] = i;
    std::vector<void*> send(count, nullptr), recv(count, nullptr);
    std::vector<cudaStream_t> streams(count);
    std::string out;
    try {
        nccl_check(ncclCommInitAll(comms.data(), count, devs.data()), "ncclCommInitAll");
        for (int i = 0; i < count; ++i) {
            check(cudaSetDevice(i), "cudaSetDevice");
            check(cudaMalloc(&send[i], sz.nccl_bytes), "cudaMalloc");
            check(cudaMalloc(&recv[i], sz.nccl_bytes), "cudaMalloc");
            check(cudaMemset(send[i], 0, sz.nccl_bytes), "cudaMemset");
            check(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
        }
        auto sync_all = [&] {
            for (int i = 0; i < count; ++i) {
                check(cudaSetDevice(i), "cudaSetDevice");
                check(cudaStreamSynchronize(streams[i]), "cudaStreamSynchronize");
            }
        };
        for (const char* op : {"all_reduce", "all_gather"}) {
            bool reduce = !std::strcmp(op, "all_reduce");
            size_t floats = sz.nccl_bytes / sizeof(float);
            size_t per_rank = floats / count;  // all-gather: each rank contributes 1/n of the output
            auto launch = [&] {
                nccl_check(ncclGroupStart(), "ncclGroupStart");
                for (int i = 0; i < count; ++i) {
                    if (reduce) nccl_check(ncclAllReduce(send[i], recv[i], floats, ncclFloat, ncclSum, comms[i], streams[i]), "ncclAllReduce");
                    else nccl_check(ncclAllGather(send[i], recv[i], per_rank, ncclFloat, comms[i], streams[i]), "ncclAllGather");
                }
                nccl_check(ncclGroupEnd(), "ncclGroupEnd");
            };
            for (int w = 0; w < 5; ++w) launch();
            sync_all();
            double bytes = reduce ? static_cast<double>(floats * sizeof(float)) : static_cast<double>(per_rank * count * sizeof(float));
            double factor = reduce ? 2.0 * (count - 1) / count : static_cast<double>(count - 1) / count;
            std::vector<double> busbw;
            for (int r = 0; r < sz.reps; ++r) {
                auto t0 = std::chrono::steady_clock::now();
                launch();
                sync_all();
                double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                busbw.push_back(bytes / t / kGB * factor);
            }
            out += std::string(out.empty() ? "" : ",") + "{\"op\":" + quote(op) + ",\"bytes\":" + num(bytes) +
                   ",\"gpus\":" + std::to_string(count) + ",\"busbw_GBps\":" + array(busbw) + "}";
        }
    } catch (const Failure& f) {
        skipped = f.what;
    }
    for (int i = 0; i < count; ++i) {
        cudaSetDevice(i);
        cudaFree(send[i]);
        cudaFree(recv[i]);
        if (streams[i]) cudaStreamDestroy(streams[i]);
        if (comms[i]) ncclCommDestroy(comms[i]);
    }
    cudaGetLastError();
    return "[" + out + "]";
}
#endif

}  // namespace

extern "C" int ftb_cuda_probe_abi(void) { return FTB_CUDA_PROBE_ABI; }

extern "C" char* ftb_cuda_probe_run(int quick) {
    Sizes sz{};
    sz.copy_bytes = quick ? (64ull << 20) : (256ull << 20);
    sz.d2d_bytes = quick ? (256ull << 20) : (1ull << 30);
    sz.reps = quick ? 5 : 10;
    sz.gemm_reps = quick ? 5 : 10;
    sz.nccl_bytes = quick ? (64ull << 20) : (256ull << 20);
    std::string doc = "{\"abi\":" + std::to_string(FTB_CUDA_PROBE_ABI);
    std::string error, devices, peers = "[]", nccl = "[]", nccl_skipped;
    try {
        int count = 0;
        check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
        for (int d = 0; d < count; ++d) devices += (d ? "," : "") + probe_device(d, sz);
        peers = probe_peers(count, sz);
#ifdef FTB_HAVE_NCCL
        nccl = probe_nccl(count, sz, nccl_skipped);
#else
        nccl_skipped = "built without NCCL (nccl.h and libnccl were not found at build time)";
#endif
    } catch (const Failure& f) {
        error = f.what;
    }
    doc += ",\"error\":" + (error.empty() ? std::string("null") : quote(error));
    doc += ",\"devices\":[" + devices + "],\"peer\":" + peers + ",\"nccl\":" + nccl;
    doc += ",\"nccl_skipped\":" + (nccl_skipped.empty() ? std::string("null") : quote(nccl_skipped)) + "}";
    char* out = static_cast<char*>(std::malloc(doc.size() + 1));
    if (out) std::memcpy(out, doc.c_str(), doc.size() + 1);
    return out;
}

extern "C" void ftb_cuda_probe_free(char* json) { std::free(json); }
