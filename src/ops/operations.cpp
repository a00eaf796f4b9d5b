#include "ops/operations.hpp"

#include <algorithm>

#include "memory/training_setup.hpp"
#include "system/storage_path.hpp"

namespace ftb {

OperationsResult plan_operations(const Job& job, const MemoryResult& mem, const TimeResult& t) {
    OperationsResult r;
    const SystemSpec& sys = job.system;
    const JobSpec& js = job.spec;
    // SM activity (what node_power expects) is the share of the step with any kernel running.
    const double sm_active = std::min(1.0, t.compute_busy + t.memory_busy);
    r.power = node_power(sys, sm_active, t.memory_busy, t.link_busy);

    // Checkpoint: adapters (+ their optimizer state) for LoRA/QLoRA, the full training state otherwise.
    const TrainingSetup set = derive_setup(job);
    CheckpointContents c;
    c.trainable_params = mem.trainable_params;
    c.frozen_params_saved = set.adapters ? 0 : mem.total_params - mem.trainable_params;
    c.weight_bytes_per_param = set.full ? set.trainable_storage_bytes : set.frozen_storage_bytes;
    c.master_bytes_per_param = set.master_bytes_per_param;
    c.optimizer_bytes_per_param = set.optimizer_bytes_per_param - set.master_bytes_per_param;
    const double ckpt_bytes = checkpoint_bytes(c);

    CheckpointPath path;
    path.nodes = sys.nodes;
    path.bytes_per_node = ckpt_bytes / double(sys.nodes);
    path.gpus_per_node = sys.cpu_only ? 0 : sys.devices_per_node;
    if (!sys.cpu_only) {
        // The GPU's host link, at its achievable rate.
        for (const auto& l : sys.links)
            if (l.link.name.rfind("pcie", 0) == 0 || l.link.name.rfind("nvlink-c2c", 0) == 0) {
                path.host_link_GBps = l.link.bandwidth_GBps * l.link.achievable_fraction;
                break;
            }
    }
    path.storage_write_GBps_per_node =
        storage_write_GBps_per_node(checkpoint_storage_kind(js.ops.checkpoint_storage.kind), nvme_array_write(sys).write_GBps,
                                    js.ops.checkpoint_storage.write_GBps);
    r.checkpoint = checkpoint_write(path);

    // Restart: the stated figure, else reading the checkpoint back over the same path (relaunch and
    // communicator set-up are not included: no source gives them).
    double restart = js.ops.restart_seconds;
    r.restart_from_job = restart > 0;
    if (!r.restart_from_job) restart = r.checkpoint.seconds;

    r.has_job_length = t.time_to_train_seconds.has_value();
    r.job_seconds = t.time_to_train_seconds.value_or(t.step_seconds);
    const int gpus = sys.total_devices();
    FailureModel fm = llama3_failure_model();
    if (js.ops.failures_per_gpu_hour) fm = scaled_failure_model(fm, *js.ops.failures_per_gpu_hour);
    double price_per_second = 0;
    if (js.ops.price_per_gpu_hour && !sys.cpu_only) price_per_second = *js.ops.price_per_gpu_hour * gpus / 3600.0;
    else if (js.ops.price_per_node_hour) price_per_second = *js.ops.price_per_node_hour * sys.nodes / 3600.0;
    r.reliability = reliability(fm, gpus, r.job_seconds, ckpt_bytes, r.checkpoint.seconds, restart, price_per_second);
    const double held = r.reliability.progresses ? r.reliability.wall_seconds : r.job_seconds;
    r.energy = energy_and_cost(held, r.power.node_w, sys.nodes, gpus, js.ops, sys.cpu_only);
    return r;
}

}  // namespace ftb
