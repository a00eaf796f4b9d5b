// The GPU fabric: libftbound_nccl.so (src/cluster/nccl/, built with nvcc and NCCL) loaded with dlopen. Data and
// collectives go over NCCL between the ranks' GPUs (one per rank: the local rank's device); control messages and
// barriers over the transport it wraps (MPI). The bytes timed live in its own device buffers.
#pragma once
#include <memory>
#include <string>

#include "cluster/transport.hpp"

namespace ftb::cluster {

// The library, or nullptr with `why` (no library: built without CUDA or NCCL; no GPU for this local rank).
std::unique_ptr<Transport> open_nccl_transport(Transport& control, int local_rank, std::size_t max_bytes, std::string& why);

}  // namespace ftb::cluster
