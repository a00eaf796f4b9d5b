// How the ranks of `probe --cluster` talk: control messages between ranks, and the timed operations of the
// fabric measurements. One interface; MPI implements it (mpi_transport.hpp). Every wait has a deadline.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "system/collectives.hpp"

namespace ftb::cluster {

enum class Wait { ok, timeout, failed };

class Transport {
public:
    virtual ~Transport() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string description() const = 0;  // e.g. "MPI (Open MPI v4.1.4)"

    // Control messages between world ranks; `recv` learns the size from the message.
    virtual Wait send(int dst, int tag, const std::string& bytes, double timeout_s) = 0;
    virtual Wait recv(int src, int tag, std::string& bytes, double timeout_s) = 0;

    // Timed data: `spin` polls without sleeping (the transfer being timed), else the wait sleeps between polls.
    virtual Wait send_data(int dst, int tag, const void* buf, std::size_t bytes, double timeout_s, bool spin) = 0;
    virtual Wait recv_data(int src, int tag, void* buf, std::size_t bytes, double timeout_s, bool spin) = 0;

    // Collectives over these world ranks from now on (every listed rank calls it with the same list).
    virtual Wait use_group(const std::vector<int>& world_ranks) = 0;
    virtual Wait barrier(double timeout_s) = 0;
    // One collective of nccl-tests' size `bytes` (collectives.hpp) over the group.
    virtual Wait collective(Collective op, const void* send, void* recv, std::size_t bytes, double timeout_s) = 0;

    // Every rank answered: a clean finish. Otherwise end the whole job (a stuck rank with it) with `code`.
    virtual void finish() = 0;
    [[noreturn]] virtual void abort_job(int code) = 0;
};

}  // namespace ftb::cluster
