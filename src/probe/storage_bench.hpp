// Sequential read and write bandwidth of a folder's filesystem with O_DIRECT, so that the figures
// come from the device and not from the page cache.
#pragma once
#include <string>

#include "probe/probe_types.hpp"

namespace ftb::probe {

struct StorageBenchOptions {
    double file_bytes = 256.0 * 1024 * 1024;
    double block_bytes = 4.0 * 1024 * 1024;   // large sequential requests, like checkpoint writes
    int io_threads = 4;                       // requests in flight (NVMe needs several to reach its rate)
    int repetitions = 3;
};

// Writes, fsyncs and reads back a scratch file in `dir`, then removes it. A filesystem that refuses
// O_DIRECT (tmpfs, some network filesystems) gives measured = false with the reason; a missing or
// unwritable folder throws ftb::InputError.
StorageBench run_storage_bench(const std::string& dir, const StorageBenchOptions& opt);

// Fraction of a file's pages held in the page cache (mincore); 0 for an empty file.
double page_cache_resident_fraction(const std::string& path);

}  // namespace ftb::probe
