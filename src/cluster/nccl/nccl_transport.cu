// libftbound_nccl.so: NCCL point-to-point and collectives between the ranks of `probe --cluster`, one GPU each,
// every wait bounded (nccl_transport_api.h). The communicator is created non-blocking (ncclConfig_t.blocking = 0,
// NCCL >= 2.14) so that a rank that never joins makes the others time out instead of waiting in ncclCommInitRank.
#include "nccl_transport_api.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int kOk = 0, kTimeout = 1, kFailed = 2;

struct State {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
    size_t max_bytes = 0;
    int nranks = 0;
    bool broken = false;  // aborted after a timeout or an error: every later call fails
} g;

using Clock = std::chrono::steady_clock;

bool past(Clock::time_point deadline) { return Clock::now() > deadline; }

Clock::time_point after(double s) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

int fail() {
    if (g.comm) ncclCommAbort(g.comm);
    g.comm = nullptr;
    g.broken = true;
    return kFailed;
}

// Waits for the communicator's pending work (init, or a grouped call) without blocking in NCCL.
int settle(Clock::time_point deadline) {
    for (;;) {
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(g.comm, &state) != ncclSuccess) return fail();
        if (state == ncclSuccess) return kOk;
        if (state != ncclInProgress) return fail();
        if (past(deadline)) {
            fail();
            return kTimeout;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
}

// Waits for the stream: the operation is done on the GPU.
int drain(Clock::time_point deadline) {
    for (;;) {
        const cudaError_t e = cudaStreamQuery(g.stream);
        if (e == cudaSuccess) return kOk;
        if (e != cudaErrorNotReady) return fail();
        if (past(deadline)) {
            fail();
            return kTimeout;
        }
        std::this_thread::yield();
    }
}

int run(double timeout_s, ncclResult_t (*enqueue)(size_t, int), size_t bytes, int arg) {
    if (g.broken || !g.comm || bytes > g.max_bytes) return kFailed;
    const auto deadline = after(timeout_s);
    const ncclResult_t r = enqueue(bytes, arg);
    if (r != ncclSuccess && r != ncclInProgress) return fail();
    if (int s = settle(deadline); s != kOk) return s;
    return drain(deadline);
}

void copy_error(const std::string& s, char* out, int len) {
    if (!out || len <= 0) return;
    std::strncpy(out, s.c_str(), static_cast<size_t>(len) - 1);
    out[len - 1] = 0;
}

}  // namespace

extern "C" {

int ftb_nccl_abi(void) { return FTB_NCCL_ABI; }

int ftb_nccl_device_count(void) {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

int ftb_nccl_unique_id(char* id) {
    ncclUniqueId u;
    if (ncclGetUniqueId(&u) != ncclSuccess) return kFailed;
    std::memcpy(id, u.internal, FTB_NCCL_ID_BYTES);
    return kOk;
}

int ftb_nccl_init(const char* id, int nranks, int rank, int device, size_t max_bytes, double timeout_s, char* error,
                  int error_len) {
    ftb_nccl_finish();
    g = State{};
    if (cudaSetDevice(device) != cudaSuccess || cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(&g.send, max_bytes) != cudaSuccess || cudaMalloc(&g.recv, max_bytes) != cudaSuccess ||
        cudaMemset(g.send, 0, max_bytes) != cudaSuccess) {
        copy_error(std::string("CUDA device ") + std::to_string(device) + ": " + cudaGetErrorString(cudaGetLastError()),
                   error, error_len);
        return kFailed;
    }
    g.max_bytes = max_bytes;
    g.nranks = nranks;
    ncclUniqueId u;
    std::memcpy(u.internal, id, FTB_NCCL_ID_BYTES);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t r = ncclCommInitRankConfig(&g.comm, nranks, u, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
        copy_error(std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(r), error, error_len);
        return fail();
    }
    const int s = settle(after(timeout_s));
    if (s != kOk) copy_error(s == kTimeout ? "NCCL communicator: not every rank joined in time" : "NCCL communicator failed",
                             error, error_len);
    return s;
}

int ftb_nccl_collective(int op, size_t bytes, double timeout_s) {
    return run(
        timeout_s,
        [](size_t b, int o) -> ncclResult_t {
            const size_t floats = b / sizeof(float), part = floats / static_cast<size_t>(g.nranks);
            switch (o) {
                case 0: return ncclAllReduce(g.send, g.recv, floats, ncclFloat, ncclSum, g.comm, g.stream);
                case 1: return ncclAllGather(g.send, g.recv, part, ncclFloat, g.comm, g.stream);
                case 2: return ncclReduceScatter(g.send, g.recv, part, ncclFloat, ncclSum, g.comm, g.stream);
                case 3: {
                    // All-to-all as nccl-tests runs it: a grouped send and receive of one part to and from every rank.
                    ncclGroupStart();
                    for (int r = 0; r < g.nranks; ++r) {
                        ncclSend(static_cast<char*>(g.send) + r * part * sizeof(float), part, ncclFloat, r, g.comm, g.stream);
                        ncclRecv(static_cast<char*>(g.recv) + r * part * sizeof(float), part, ncclFloat, r, g.comm, g.stream);
                    }
                    return ncclGroupEnd();
                }
            }
            return ncclInvalidArgument;
        },
        bytes, op);
}

int ftb_nccl_send(int peer, size_t bytes, double timeout_s) {
    return run(timeout_s, [](size_t b, int p) { return ncclSend(g.send, b, ncclChar, p, g.comm, g.stream); }, bytes, peer);
}

int ftb_nccl_recv(int peer, size_t bytes, double timeout_s) {
    return run(timeout_s, [](size_t b, int p) { return ncclRecv(g.recv, b, ncclChar, p, g.comm, g.stream); }, bytes, peer);
}

void ftb_nccl_finish(void) {
    if (g.comm) ncclCommDestroy(g.comm);
    if (g.send) cudaFree(g.send);
    if (g.recv) cudaFree(g.recv);
    if (g.stream) cudaStreamDestroy(g.stream);
    g = State{};
}

}  // extern "C"
