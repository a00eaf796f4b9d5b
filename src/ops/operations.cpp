#include "ops/operations.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "memory/training_setup.hpp"
#include "ops/prices.hpp"
#include "ops/storage_path.hpp"

namespace ftb {
namespace {

// Bytes a checkpoint holds: adapters (+ their optimizer state) for LoRA/QLoRA, the full training state otherwise.
double job_checkpoint_bytes(const Job& job, const MemoryResult& mem) {
    const TrainingSetup set = derive_setup(job);
    CheckpointContents c;
    c.trainable_params = mem.trainable_params;
    c.frozen_params_saved = set.adapters ? 0 : mem.total_params - mem.trainable_params;
    c.weight_bytes_per_param = set.full ? set.trainable_storage_bytes : set.frozen_storage_bytes;
    c.master_bytes_per_param = set.master_bytes_per_param;
    c.optimizer_bytes_per_param = set.optimizer_bytes_per_param - set.master_bytes_per_param;
    return checkpoint_bytes(c);
}

// The GPU's host link at its achievable rate (0 on a CPU server: the state is already in host memory).
double host_link_GBps(const SystemSpec& sys) {
    if (sys.cpu_only) return 0;
    for (const auto& l : sys.links)
        if (l.link.name.rfind("pcie", 0) == 0 || l.link.name.rfind("nvlink-c2c", 0) == 0)
            return l.link.bandwidth_GBps * l.link.achievable_fraction;
    return 0;
}

CheckpointPath checkpoint_path(const SystemSpec& sys, double bytes, const StorageTier& tier, double speedup) {
    CheckpointPath path;
    path.nodes = sys.nodes;
    path.bytes_per_node = bytes / double(sys.nodes);
    path.gpus_per_node = sys.cpu_only ? 0 : sys.devices_per_node;
    path.host_link_GBps = host_link_GBps(sys);
    path.storage_write_GBps_per_node = tier.write_GBps_per_node * speedup;
    path.storage_aggregate_GBps = tier.aggregate_write_GBps * speedup;
    path.storage_read_GBps_per_node = tier.read_GBps_per_node * speedup;
    path.storage_aggregate_read_GBps = tier.aggregate_read_GBps * speedup;
    return path;
}

DataRead data_read(const Job& job, const TimeResult& t, const StorageTier& tier, double speedup) {
    DataRead d;
    const int nodes = std::max(1, job.system.nodes);
    d.bytes_per_node_per_step = t.tokens_per_step * token_bytes_on_storage(job.model.vocab) / nodes;
    const double rate = read_GBps_per_node_sharing(tier, nodes) * speedup;
    if (rate > 0) d.seconds_per_step = d.bytes_per_node_per_step / (rate * 1e9);
    d.exposed_seconds_per_step = std::max(0.0, d.seconds_per_step - t.step_seconds);
    return d;
}

// Mean node draw over the time the nodes are held: checkpoint writes and restarts run no kernels, so those
// seconds draw the node's idle power (node_power at zero utilisation), the rest the training step's.
double held_node_w(const SystemSpec& sys, double training_node_w, const ReliabilityResult& rel, double held_s) {
    if (!rel.progresses || !(held_s > 0)) return training_node_w;
    const double idle_s = std::min(held_s, rel.checkpoint_overhead_seconds + rel.expected_interruptions * rel.restart_seconds);
    const double idle_node_w = node_power(sys, 0, 0, 0).node_w;
    return (training_node_w * (held_s - idle_s) + idle_node_w * idle_s) / held_s;
}

}  // namespace

OperationsResult plan_operations(const Job& job, const MemoryResult& mem, const TimeResult& t, double storage_speedup) {
    OperationsResult r;
    const SystemSpec& sys = job.system;
    const JobSpec& js = job.spec;
    // SM activity (what node_power expects) is the share of the step with any kernel running.
    const double sm_active = std::min(1.0, t.compute_busy + t.memory_busy);
    r.power = node_power(sys, sm_active, t.memory_busy, t.link_busy);

    r.checkpoint_storage = resolve_storage(js.ops.checkpoint_storage, sys);
    r.data_storage = resolve_storage(js.ops.data_storage, sys);
    if (sys.nodes > 1 && !r.checkpoint_storage.durable)
        r.storage_note = fmt::format("checkpoints on {} only: a failed node's shard is lost with it, so the job cannot "
                                     "restart from them; use shared storage (ops.checkpoint_storage)",
                                     r.checkpoint_storage.name);
    const double ckpt_bytes = job_checkpoint_bytes(job, mem);
    const CheckpointPath path = checkpoint_path(sys, ckpt_bytes, r.checkpoint_storage, storage_speedup);
    r.checkpoint = checkpoint_write(path);
    r.restore = checkpoint_read(path);
    r.data_read = data_read(job, t, r.data_storage, storage_speedup);

    // Restart: the stated figure, else reading the checkpoint back (relaunch and communicator set-up are not
    // included: no source gives them).
    double restart = js.ops.restart_seconds;
    r.restart_from_job = restart > 0;
    if (!r.restart_from_job) restart = r.restore.seconds;

    r.has_job_length = t.time_to_train_seconds.has_value();
    r.job_seconds = t.time_to_train_seconds.value_or(t.step_seconds);
    const int gpus = sys.total_devices();
    FailureModel fm = llama3_failure_model();
    if (js.ops.failures_per_gpu_hour) fm = scaled_failure_model(fm, *js.ops.failures_per_gpu_hour);
    r.price = node_price(js.ops, sys);
    const double price_per_second = r.price ? r.price->per_node_hour * sys.nodes / 3600.0 : 0;
    r.reliability = reliability(fm, gpus, r.job_seconds, ckpt_bytes, r.checkpoint.seconds, restart, price_per_second,
                                t.step_seconds);
    const double held = r.reliability.progresses ? r.reliability.wall_seconds : r.job_seconds;
    r.energy = energy_and_cost(held, held_node_w(sys, r.power.node_w, r.reliability, held), sys.nodes, js.ops, r.price);
    return r;
}

}  // namespace ftb
