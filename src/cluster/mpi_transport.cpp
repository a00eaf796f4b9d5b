#include "cluster/mpi_transport.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "cluster/library_loader.hpp"
#include "cluster/mpi/mpi_transport_api.h"
#include "ftbound/error.hpp"

namespace ftb::cluster {
namespace {

struct Api {
    int (*abi)();
    int (*init)(int*, int*, char*, int, char*, int);
    int (*send)(int, int, const void*, size_t, double, int);
    int (*probe)(int, int, size_t*, double, int);
    int (*recv)(int, int, void*, size_t, double, int);
    int (*group)(const int*, int);
    int (*barrier)(double);
    int (*collective)(int, const void*, void*, size_t, double);
    void (*finalize)();
    void (*abort)(int);
};

Wait wait_of(int rc) { return rc == FTB_MPI_OK ? Wait::ok : rc == FTB_MPI_TIMEOUT ? Wait::timeout : Wait::failed; }

int op_code(Collective op) {
    switch (op) {
        case Collective::all_reduce: return FTB_MPI_ALL_REDUCE;
        case Collective::all_gather: return FTB_MPI_ALL_GATHER;
        case Collective::reduce_scatter: return FTB_MPI_REDUCE_SCATTER;
        case Collective::all_to_all: return FTB_MPI_ALL_TO_ALL;
        default: break;
    }
    throw InternalError("the MPI transport times all-reduce, all-gather, reduce-scatter and all-to-all only");
}

class MpiTransport final : public Transport {
public:
    MpiTransport(const Api& api, int rank, int size, std::string version)
        : api_(api), rank_(rank), size_(size), version_(std::move(version)) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string description() const override { return "MPI (" + version_ + ")"; }
    Wait send(int dst, int tag, const std::string& bytes, double timeout_s) override {
        return wait_of(api_.send(dst, tag, bytes.data(), bytes.size(), timeout_s, 0));
    }
    Wait recv(int src, int tag, std::string& bytes, double timeout_s) override {
        size_t n = 0;
        if (Wait w = wait_of(api_.probe(src, tag, &n, timeout_s, 0)); w != Wait::ok) return w;
        bytes.assign(n, '\0');
        // The message is on its way: give its transfer time even when the caller only looked for it (timeout 0).
        return wait_of(api_.recv(src, tag, bytes.data(), n, std::max(timeout_s, 30.0), 0));
    }
    Wait send_data(int dst, int tag, const void* buf, std::size_t bytes, double timeout_s, bool spin) override {
        return wait_of(api_.send(dst, tag, buf, bytes, timeout_s, spin ? 1 : 0));
    }
    Wait recv_data(int src, int tag, void* buf, std::size_t bytes, double timeout_s, bool spin) override {
        return wait_of(api_.recv(src, tag, buf, bytes, timeout_s, spin ? 1 : 0));
    }
    Wait use_group(const std::vector<int>& world_ranks) override {
        return wait_of(api_.group(world_ranks.data(), static_cast<int>(world_ranks.size())));
    }
    Wait barrier(double timeout_s) override { return wait_of(api_.barrier(timeout_s)); }
    Wait collective(Collective op, const void* send, void* recv, std::size_t bytes, double timeout_s) override {
        return wait_of(api_.collective(op_code(op), send, recv, bytes, timeout_s));
    }
    void finish() override { api_.finalize(); }
    [[noreturn]] void abort_job(int code) override {
        api_.abort(code);
        std::_Exit(code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
    }

private:
    Api api_;
    int rank_, size_;
    std::string version_;
};

template <typename F>
void bind(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) throw InputError("--cluster", "transport", std::string("libftbound_mpi.so lacks ") + name + " (another version?)");
}

}  // namespace

std::unique_ptr<Transport> open_mpi_transport() {
    std::string path, load_error;
    void* lib = load_library("libftbound_mpi.so", "FTBOUND_MPI_TRANSPORT", path, load_error);
    if (!lib)
        throw InputError("--cluster", "transport",
                         "the MPI transport libftbound_mpi.so was not found (" + load_error +
                             "): build ftbound where MPI is installed (Debian: libopenmpi-dev), or set FTBOUND_MPI_TRANSPORT");
    Api api{};
    bind(lib, "ftb_mpi_abi", api.abi);
    if (api.abi() != FTB_MPI_ABI) throw InputError(path, "transport", "has another interface version; rebuild ftbound");
    bind(lib, "ftb_mpi_init", api.init);
    bind(lib, "ftb_mpi_send", api.send);
    bind(lib, "ftb_mpi_probe", api.probe);
    bind(lib, "ftb_mpi_recv", api.recv);
    bind(lib, "ftb_mpi_group", api.group);
    bind(lib, "ftb_mpi_barrier", api.barrier);
    bind(lib, "ftb_mpi_collective", api.collective);
    bind(lib, "ftb_mpi_finalize", api.finalize);
    bind(lib, "ftb_mpi_abort", api.abort);
    int rank = 0, size = 0;
    char version[256] = {0}, error[256] = {0};
    if (api.init(&rank, &size, version, sizeof version, error, sizeof error) != FTB_MPI_OK)
        throw InputError("--cluster", "MPI", error[0] ? error : "MPI did not start");
    return std::make_unique<MpiTransport>(api, rank, size, version);
}

}  // namespace ftb::cluster
