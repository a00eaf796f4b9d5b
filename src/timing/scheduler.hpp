// The scheduler: a stage's micro-batch work (work_builder.hpp) repeated over gradient accumulation, the
// pipeline bubble, communication on its own stream with the overlap each framework gets, the optimizer step
// and offload traffic. Each phase lands in a ledger with the resource that bounds it.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "ftbound/memory.hpp"
#include "ftbound/timing.hpp"
#include "system/collectives.hpp"
#include "timing/work_builder.hpp"

namespace ftb {

// Phases of the step by name and resource; adding to an existing phase accumulates.
class Ledger {
public:
    void add(const std::string& phase, double seconds, Resource r);
    std::vector<StepPhase>& phases() { return phases_; }
    const std::vector<StepPhase>& phases() const { return phases_; }

private:
    std::vector<StepPhase> phases_;
};

// The communication groups of a layout.
struct CommGroups {
    CommGroup tp, dp, pp, cp, ep;
};
// Built once per job: they walk the topology (Megatron rank order tp-cp-dp-pp).
CommGroups build_comm_groups(const Job& job);
// The same groups with link bandwidths scaled (weak points).
CommGroups scaled_comm_groups(const CommGroups& g, const ResourceScale& s);
// Where a group's time goes: NICs when it spans nodes and the network sets the pace, else NVLink or PCIe.
Resource comm_resource(const CommGroup& g, const CollectiveCost& cost);

// Compute that transfers can hide under. Each overlapping transfer uses up what it hides, so two transfers
// never hide under the same seconds. When a transfer outlasts the compute it overlaps, that compute ran under
// the transfer: its seconds belong to the transfer's resource (`rebound_s`, re-attributed at the end).
struct OverlapWindows {
    double backward_s = 0;   // the last micro-batch's backward (+ recompute)
    double forward_s = 0;    // the forward of all micro-batches
    std::array<double, kResourceCount> rebound_s{};
    // Hides `transfer_s` under the backward window; returns the exposed part.
    double hide_under_backward(double transfer_s, Resource r);
};

struct Schedule {
    Ledger ledger;
    OverlapWindows windows;
    double comm_busy_s = 0;   // seconds the GPU's links carry traffic
};

// Everything the scheduling steps read, resolved once per plan.
struct ScheduleInputs {
    const Job& job;
    const MemoryResult& mem;
    const TrainingSetup& set;
    const DeviceRates& rates;
    const ResourceScale& scale;
    const CommGroups& groups;   // already scaled
    const StageWork& stage;
    double tokens_per_gpu = 0;  // one micro-batch
    double grad_accumulation = 1;
};

// Blocks per pipeline stage (fractional when they do not divide).
double layers_per_stage(const Job& job);

// Micro-batch slots each pipeline stage idles per step: (pp - 1) / virtual stages; 0 without pipelining.
double pipeline_bubble_slots(const Job& job);
// The compute stream: every micro-batch's kernels, the host-bound idle time and the pipeline bubble.
void schedule_compute(Schedule& s, const ScheduleInputs& in);
// Collectives of tensor, context, expert and pipeline parallelism (per micro-batch).
void schedule_tensor_parallel(Schedule& s, const ScheduleInputs& in);
void schedule_context_parallel(Schedule& s, const ScheduleInputs& in);
void schedule_expert_parallel(Schedule& s, const ScheduleInputs& in);
void schedule_pipeline_transfers(Schedule& s, const ScheduleInputs& in);
// Data parallelism: ZeRO-3/FSDP per-block gathers, or DDP / ZeRO-1/2 gradient sync per step.
void schedule_data_parallel(Schedule& s, const ScheduleInputs& in);
// CPU servers: one data-parallel rank per socket, gradients all-reduced over the socket link.
void schedule_socket_gradient_exchange(Schedule& s, const ScheduleInputs& in);
// CPU servers: page faults on the tensors every step allocates afresh (gradients, optimizer temporaries, logits).
double cpu_fresh_page_bytes(const ScheduleInputs& in);
void schedule_cpu_fresh_pages(Schedule& s, const ScheduleInputs& in);
// The optimizer step on the GPU, or on the host with its PCIe traffic (ZeRO-Offload).
// Bytes torch's AdamW moves through DRAM per parameter on the CPU (element sizes: parameter, gradient, state).
double cpu_adamw_bytes_per_param(OptimizerImpl impl, double param_bytes, double grad_bytes, double state_bytes);
// torch.optim on the host per rank (FSDP CPU offload) on the launcher's threads per rank.
double torch_cpu_optimizer_seconds(const ScheduleInputs& in, double trainable_here);
void schedule_optimizer_step(Schedule& s, const ScheduleInputs& in);
// Parameters / activations offloaded to the host, streamed per micro-batch.
void schedule_offload_streams(Schedule& s, const ScheduleInputs& in);

// The whole step in order.
Schedule schedule_step(const ScheduleInputs& in);

}  // namespace ftb
