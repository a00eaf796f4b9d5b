// The MPI transport: libftbound_mpi.so (src/cluster/mpi/) loaded with dlopen, so that ftbound builds and runs where
// no MPI is installed and only `probe --cluster` carries libmpi.
#pragma once
#include <memory>

#include "cluster/transport.hpp"

namespace ftb::cluster {

// Loads the library ($FTBOUND_MPI_TRANSPORT, next to the ftbound binary, ../lib/, the loader's path) and runs
// MPI_Init. Throws InputError when there is no such library or MPI does not start.
std::unique_ptr<Transport> open_mpi_transport();

}  // namespace ftb::cluster
