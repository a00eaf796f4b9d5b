// The memory walk, phase by phase: what each pipeline stage stores (stage_params), the weights, gradients
// and optimizer state (model_state), saved activations (stage_activations), the logits (loss_memory), the
// walk through one step (step_walk), then the device-level figures and the verdict (device_memory).
// Framework behaviour enters only through the FrameworkProfile (data/frameworks/*.yaml).
#include "ftbound/memory.hpp"
#include "memory/device_memory.hpp"
#include "memory/host_heap.hpp"
#include "memory/step_walk.hpp"

namespace ftb {

const char* to_string(MemoryPhase p) {
    switch (p) {
        case MemoryPhase::forward: return "forward";
        case MemoryPhase::loss: return "loss";
        case MemoryPhase::backward: return "backward";
        case MemoryPhase::optimizer_step: return "optimizer step";
    }
    return "?";
}

const char* to_string(MemoryVerdict v) {
    switch (v) {
        case MemoryVerdict::fits: return "fits";
        case MemoryVerdict::tight: return "tight";
        case MemoryVerdict::does_not_fit: return "does_not_fit";
    }
    return "?";
}

namespace {

StageMemory stage_memory(const Job& job, const TrainingSetup& set, const StageSplit& split, int64_t stage) {
    StageMemory s;
    s.params = stage_params(job, set, split);
    s.weights = weight_bytes(job, set, s.params);
    s.grads = gradient_bytes(job, set, s.params);
    s.optimizer = optimizer_bytes(job, set, s.params);
    s.activations = stage_activations(job, set, split, stage);
    s.loss = loss_memory(job, set, split);
    s.work = stage_workspaces(job, set, split);
    s.has_head = split.has_head;
    s.first_block = split.first;
    return s;
}

// Pipeline stages that can hold the peak: the first (most in-flight micro-batches, the embedding), the last (the
// head and the logits) and the second: with the embedding and the head counted as layers, or with a split that
// gives the first stage fewer blocks (torchtitan's generate_split_points), it holds the most blocks with one
// micro-batch fewer in flight, and where gradients accumulate from the first backward (FSDP2 under pipelining) its
// steady-state forwards meet them.
std::vector<int64_t> candidate_stages(const ParallelSpec& par) {
    if (par.pp <= 1) return {0};
    if (par.pp > 2) return {0, 1, par.pp - 1};
    return {0, par.pp - 1};
}

}  // namespace

MemoryResult plan_memory(const Job& job, MemoryWalk* walk) {
    const ModelSpec& m = job.model;
    const TrainingSetup set = derive_setup(job);
    const DeviceSpec& dev = job.system.device;
    const int64_t layers = int64_t(m.num_layers());
    MemoryResult res;
    res.capacity_bytes = dev.kind == DeviceKind::gpu ? dev.memory_bytes : job.system.host_memory_bytes / job.system.sockets;
    res.total_params = double(m.total_params());
    res.trainable_params = stage_params(job, set, {0, layers, true, true}, true).trainable;
    res.tokens_per_micro_batch = double(set.tokens_per_micro_batch);

    PhasePeak best;
    double host_per_gpu = 0, heap_retained = 0, reserved_streams = -1;
    for (const int64_t stage : candidate_stages(job.spec.parallel)) {
        const StageSplit split = stage_split(layers, job.spec.parallel.pp, stage, job.spec.parallel.pp_edges_as_layers);
        const StageMemory s = stage_memory(job, set, split, stage);
        std::vector<MemoryWalkPoint> points;
        const PhasePeak peak = walk_step(job, s, walk ? &points : nullptr);
        if (peak.compute_stream_peak + peak.side_stream_pools > reserved_streams) {
            reserved_streams = peak.compute_stream_peak + peak.side_stream_pools;
            res.compute_stream_peak_bytes = peak.compute_stream_peak;
            res.side_stream_pool_bytes = peak.side_stream_pools;
        }
        if (peak.total > best.total) {
            best = peak;
            res.peak_stage = int(stage);
            if (dev.kind != DeviceKind::gpu) heap_retained = glibc_heap_retained_bytes(job, set, s);
            if (walk) *walk = {int(stage), std::move(points)};
        }
        host_per_gpu = std::max(host_per_gpu, s.optimizer.host + s.weights.host + s.activations.host);
        res.offloaded_activation_bytes =
            std::max(res.offloaded_activation_bytes, s.activations.host / std::max(1.0, s.activations.in_flight));
        res.paged_bytes = std::max(res.paged_bytes, s.optimizer.paged);
        if (stage == 0) {
            const StageParams& p = s.params;
            res.params_per_gpu = (p.trainable + p.held + p.frozen + p.quantised) / (params_sharded_at_rest(job) ? double(set.dp_shard) : 1.0);
            res.in_flight_micro_batches = s.activations.in_flight;
            res.layer_activation_per_token = s.activations.first_block_per_token;
        }
    }
    res.breakdown = best.parts;
    res.peak_phase = best.phase;
    res.allocated_peak_bytes = best.total;
    add_device_memory(job, res, heap_retained);
    decide_fit(res);

    res.host_bytes = host_per_gpu * double(std::min<int64_t>(job.system.devices_per_node, job.system.total_devices()));
    res.host_capacity_bytes = job.system.host_memory_bytes;
    res.host_fits = res.host_capacity_bytes <= 0 || res.host_bytes <= res.host_capacity_bytes;
    return res;
}

}  // namespace ftb
