// Weights, gradients and optimizer state of one pipeline stage on one GPU: the bytes that do not depend on
// the batch, in the dtypes the framework keeps them (training_setup) and after ZeRO/FSDP sharding and offload.
#pragma once
#include "ftbound/job.hpp"
#include "memory/stage_params.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

struct WeightBytes {
    double stored = 0;        // parameters resident on the GPU (ZeRO-3 shard, 0 when offloaded)
    double gathered = 0;      // full blocks gathered by ZeRO-3/FSDP prefetch, in the compute dtype
    double head_gathered = 0; // ZeRO-3/FSDP: the output head's weight, gathered while the logits and the loss form
    double head_staging = 0;  // DeepSpeed ZeRO-3 offload: the head's partition staged on the device while it is gathered
    double root_gathered = 0; // FSDP2 root unit (embedding, final norm, head): gathered from the head's backward to the end
    // FSDP2 all-gather outputs, made on the all-gather copy-in stream: the largest two units at once (the one being
    // copied out and the next one prefetched), in the dtype they travel in.
    double all_gather_pool = 0;
    double amp_copies = 0;    // torch.amp low-precision copies of fp32 matmul weights, kept for backward
    double dequant = 0;       // QLoRA: one dequantised weight matrix in flight (with its unpacking temporaries)
    // auto-gptq: dequantised fp16 weights that matmul keeps for the input's gradient; `saved_in_forward`: from
    // forward on (every block's, no recompute), else only the recomputed block's in backward.
    double dequant_saved = 0;
    bool dequant_saved_in_forward = false;
    double host = 0;          // parameters offloaded to host RAM
};

struct GradientBytes {
    double full = 0;          // every gradient this GPU forms, unsharded
    double resident = 0;      // what stays on the GPU once all are formed (sharded, offloaded, per layer)
    double buffers = 0;       // reduce buckets / DDP flat buckets / the unsharded block gradient in flight
    bool buffers_kept = false;// the buffers exist through the whole step, not only in backward (DeepSpeed ZeRO-3)
    bool persist = false;     // kept across micro-batches (gradient accumulation)
    // The output head's weight gradient, the first one backward forms (0 when the head does not train here or
    // gradients are sharded/offloaded), and whether it stays until the end of backward (tied to the embedding).
    double head = 0;
    bool head_held = false;
    // Unsharded gradients in the reduce dtype accumulated over the pipeline's micro-batches (FSDP2 under
    // torch.distributed.pipelining), from the first micro-batch's backward to the step's end; not at the optimizer step.
    double accumulated = 0;
    // FSDP2 root unit: the head's unsharded gradient, held from the head's backward until the root's post-backward.
    double root_unsharded = 0;
    // The sharded gradients live on the reduce-scatter stream (FrameworkProfile::fsdp2_stream_pools); that stream's
    // pool also holds one unit's reduce-scatter output beyond them.
    bool on_side_stream = false;
    double reduce_scatter_pool = 0;
};

struct OptimizerBytes {
    double resident = 0;      // states (+ fp32 master weights) in device memory
    double host = 0;          // offloaded states, master weights and gradients in host RAM
    double paged = 0;         // bitsandbytes paged states in CUDA unified memory (outside the caching allocator)
    double step_temp = 0;     // intermediates of the optimizer step (foreach implementations)
};

WeightBytes weight_bytes(const Job& job, const TrainingSetup& set, const StageParams& p);
GradientBytes gradient_bytes(const Job& job, const TrainingSetup& set, const StageParams& p);
OptimizerBytes optimizer_bytes(const Job& job, const TrainingSetup& set, const StageParams& p);

}  // namespace ftb
