#include "cluster/nccl_transport.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cluster/library_loader.hpp"
#include "cluster/mpi/mpi_transport_api.h"
#include "cluster/nccl/nccl_transport_api.h"
#include "ftbound/error.hpp"

namespace ftb::cluster {
namespace {

constexpr int kTagUniqueId = 8;

struct Api {
    int (*abi)();
    int (*device_count)();
    int (*unique_id)(char*);
    int (*init)(const char*, int, int, int, size_t, double, char*, int);
    int (*collective)(int, size_t, double);
    int (*send)(int, size_t, double);
    int (*recv)(int, size_t, double);
    void (*finish)();
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
    throw InternalError("the NCCL transport times all-reduce, all-gather, reduce-scatter and all-to-all only");
}

class NcclTransport final : public Transport {
public:
    NcclTransport(Transport& control, const Api& api, int device, std::size_t max_bytes)
        : control_(control), api_(api), device_(device), max_bytes_(max_bytes) {}
    ~NcclTransport() override { api_.finish(); }

    int rank() const override { return control_.rank(); }
    int size() const override { return control_.size(); }
    std::string description() const override { return "NCCL (GPU " + std::to_string(device_) + " per rank)"; }
    Wait send(int dst, int tag, const std::string& bytes, double timeout_s) override { return control_.send(dst, tag, bytes, timeout_s); }
    Wait recv(int src, int tag, std::string& bytes, double timeout_s) override { return control_.recv(src, tag, bytes, timeout_s); }
    // The bytes move between the ranks' device buffers; `buf` (host memory) is not read or written.
    Wait send_data(int dst, int, const void*, std::size_t bytes, double timeout_s, bool) override {
        return wait_of(api_.send(index_of(dst), bytes, timeout_s));
    }
    Wait recv_data(int src, int, void*, std::size_t bytes, double timeout_s, bool) override {
        return wait_of(api_.recv(index_of(src), bytes, timeout_s));
    }
    // A communicator over these ranks: the lowest asks NCCL for the unique id and sends it to the others. (Barriers
    // stay the control transport's: its group is set apart, by the caller.)
    Wait use_group(const std::vector<int>& ranks) override {
        if (ranks == group_) return Wait::ok;
        const double timeout_s = 60;
        std::string id(FTB_NCCL_ID_BYTES, '\0');
        if (rank() == ranks.front()) {
            if (api_.unique_id(id.data()) != FTB_MPI_OK) return Wait::failed;
            for (size_t i = 1; i < ranks.size(); ++i)
                if (Wait w = control_.send(ranks[i], kTagUniqueId, id, timeout_s); w != Wait::ok) return w;
        } else if (Wait w = control_.recv(ranks.front(), kTagUniqueId, id, timeout_s); w != Wait::ok || id.size() != FTB_NCCL_ID_BYTES) {
            return w == Wait::ok ? Wait::failed : w;
        }
        group_ = ranks;
        const int index = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank()) - ranks.begin());
        char error[256] = {0};
        return wait_of(api_.init(id.data(), static_cast<int>(ranks.size()), index, device_, max_bytes_, timeout_s, error,
                                 sizeof error));
    }
    Wait barrier(double timeout_s) override { return control_.barrier(timeout_s); }
    Wait collective(Collective op, const void*, void*, std::size_t bytes, double timeout_s) override {
        return wait_of(api_.collective(op_code(op), bytes, timeout_s));
    }
    void finish() override { control_.finish(); }
    [[noreturn]] void abort_job(int code) override {
        control_.abort_job(code);
        std::_Exit(code);  // not reached: the control transport ends the job
    }

private:
    int index_of(int world_rank) const {
        auto it = std::find(group_.begin(), group_.end(), world_rank);
        return it == group_.end() ? -1 : static_cast<int>(it - group_.begin());
    }

    Transport& control_;
    Api api_;
    int device_;
    std::size_t max_bytes_;
    std::vector<int> group_;
};

template <typename F>
bool bind(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
}

}  // namespace

std::unique_ptr<Transport> open_nccl_transport(Transport& control, int local_rank, std::size_t max_bytes, std::string& why) {
    std::string path, error;
    void* lib = load_library("libftbound_nccl.so", "FTBOUND_NCCL_TRANSPORT", path, error);
    if (!lib) {
        why = "no NCCL transport library (built without CUDA and NCCL?): " + error;
        return nullptr;
    }
    Api api{};
    if (!bind(lib, "ftb_nccl_abi", api.abi) || api.abi() != FTB_NCCL_ABI || !bind(lib, "ftb_nccl_device_count", api.device_count) ||
        !bind(lib, "ftb_nccl_unique_id", api.unique_id) || !bind(lib, "ftb_nccl_init", api.init) ||
        !bind(lib, "ftb_nccl_collective", api.collective) || !bind(lib, "ftb_nccl_send", api.send) ||
        !bind(lib, "ftb_nccl_recv", api.recv) || !bind(lib, "ftb_nccl_finish", api.finish)) {
        why = path + " has another interface version";
        return nullptr;
    }
    // One GPU per rank: the launcher may show each rank only its own (CUDA_VISIBLE_DEVICES), else the local rank's.
    const int devices = api.device_count();
    if (devices < 1 || (devices > 1 && local_rank >= devices)) {
        why = "local rank " + std::to_string(local_rank) + " has no GPU of its own (" + std::to_string(devices) + " visible)";
        return nullptr;
    }
    return std::make_unique<NcclTransport>(control, api, devices == 1 ? 0 : local_rank, max_bytes);
}

}  // namespace ftb::cluster
