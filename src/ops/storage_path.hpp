// The storage a job writes checkpoints to and reads its data from (data/storage/), resolved for its system:
// a named tier, else local NVMe on one node and the shared parallel file system on more (a checkpoint on a
// node's own drives is lost with the node, so a multi-node job restarts from shared storage).
#pragma once
#include "ftbound/job_spec.hpp"
#include "ftbound/storage.hpp"
#include "ftbound/system_spec.hpp"

namespace ftb {

// The tier the job names, or the default for its node count, with the job's figures applied; node-local
// tiers take the system's drive figures (the tier's own when the system states none).
StorageTier resolve_storage(const StorageChoice& choice, const SystemSpec& system);
const char* default_storage_tier(int nodes);   // "local-nvme" | "parallel-fs"

// Rates one node gets from the tier when all `nodes` read or write at once, GB/s.
double write_GBps_per_node_sharing(const StorageTier& tier, int nodes);
double read_GBps_per_node_sharing(const StorageTier& tier, int nodes);

// Bytes of training data a token takes on storage: token ids stored as uint16 when the vocabulary fits,
// else int32 (Megatron-LM's indexed dataset: DType.optimal_dtype, megatron/core/datasets/indexed_dataset.py).
double token_bytes_on_storage(int64_t vocab);

}  // namespace ftb
