// Host time of eager PyTorch: every kernel of an uncompiled module is issued from Python (module call, ATen
// dispatch, caching allocator, autograd node, cudaLaunchKernel) in the forward, and by autograd's engine thread in
// the backward; every tensor that receives a gradient runs one AccumulateGrad node per backward. These are fixed
// costs per op that do not scale with FLOPs, measured in a real PyTorch profiler trace (not fitted to a case).
// What hides them is the GPU's own time: host_issue.cpp takes the larger of host and GPU per phase.
#pragma once
#include "timing/work.hpp"

namespace ftb {

// Host seconds per op, measured in the Kineto trace of a 16-rank A100-SXM4-80GB training job published by
// HolisticTraceAnalysis (tests/data/negative_queue_length_values_check/rank0.json.gz, commit d54e43f; copied to
// tests/data/traces/hta_negative_queue_rank0.json.gz), 5 profiled steps, PyTorch profiler with record_shapes:
// tools/eager_host_costs.py recomputes each figure from that file (ctest eager_host_costs_from_trace). The other
// shared trace with host threads (hta_nccl_data_rank0: ResNet, DDP over 2 A100s, 2024) gives 213 / 110 / 144 us
// for the three figures below: hosts and profiler settings differ by up to 10x, and these are the lower ones.
// - Forward: the median interval between consecutive cudaLaunchKernel calls on the Python (main) thread, 20 us
//   over the 3,538 intervals under 1 ms (the top-level ATen op that launches one kernel: median 19 us).
inline constexpr double kEagerForwardKernelSeconds = 20e-6;
// - Backward: the median duration per launched kernel of the autograd engine's top-level nodes
//   (autograd::engine::evaluate_function: ...Backward), AccumulateGrad excluded: 32 us over 235 nodes.
inline constexpr double kEagerBackwardKernelSeconds = 32e-6;
// - AccumulateGrad: the median duration of the engine's AccumulateGrad node, one per tensor with a gradient and
//   backward: 38 us over 805 nodes.
inline constexpr double kAccumulateGradSeconds = 38e-6;

// Whether this job's kernels are issued op by op from Python: a GPU job whose blocks are not compiled.
bool issues_eagerly(const WorkContext& c);

// Tensors of one block that receive a gradient per backward (one AccumulateGrad each): the LoRA A and B of every
// adapted linear, or every weight, bias and norm weight of a block that trains; none for a frozen block.
double block_grad_tensors(const LayerSpec& l, const WorkContext& c, bool trains);

// The host's time for one micro-batch's phases: kernels issued by the forward's Python, by the backward's engine
// (a recomputed forward runs Python again: forward cost), and one AccumulateGrad per gradient tensor.
struct PhaseHostSeconds {
    double forward_s = 0, backward_s = 0;
};
PhaseHostSeconds eager_host_seconds(double forward_kernels, double backward_kernels, double recompute_kernels,
                                    double grad_tensors, double launch_overhead_scale);

}  // namespace ftb
