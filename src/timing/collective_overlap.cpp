// Compute slowed by collectives that overlap it (collective_overlap.hpp).
#include "timing/collective_overlap.hpp"

#include <algorithm>

namespace ftb {

namespace {

// A collective running beside compute takes SMs and HBM from it. NCCL runs one CTA per channel, each on an SM of
// its own ("NCCL CTAs won't share an SM with compute kernels"), and "uses the minimal number of SMs to achieve the
// performance of the platform ... on DGX with 8 NICs and a top speed of 190 GB/s, it would use 16 SMs" (NCCL
// maintainer, NVIDIA/nccl issue #689): about 190/16 GB/s of bus bandwidth per SM, up to MAXCHANNELS = 32
// (nccl src/include/device.h). Its traffic crosses HBM "at least 2x ... it can be 3x" the link rate (stored,
// read back, user data; NVIDIA/nccl issue #1428, where a GEMM overlapped with an all-gather on A100 took 2.08 ms
// against 1.18 ms alone).
constexpr double kNcclBusGBpsPerSm = 190.0 / 16;
constexpr double kNcclMaxChannels = 32;
constexpr double kNcclHbmCrossings = 3;

// The bus bandwidth of the group's ring path (the node fabric, or across nodes its GPUs' NICs), the rate NCCL
// sizes its channels for.
double path_bus_GBps(const CommGroup& g) {
    if (g.nodes <= 1) return g.intra_bus_GBps;
    const double net = double(g.ranks_per_node) * g.nic_GBps;
    return g.ranks_per_node > 1 ? std::min(net, g.intra_bus_GBps) : net;
}

// Seconds the compute stream loses while `overlapped_s` of collective `cost` runs beside it: the share of SMs the
// collective holds for the compute-bound kernels, the share of HBM bandwidth for the memory-bound ones. NCCL fixes
// its channel count when the communicator is built, from the bandwidth of the path its graph search found (it
// "uses the minimal number of SMs to achieve the performance of the platform", issue #689; nccl
// src/graph/search.cc ncclTopoCompute sets graph->nChannels for the path's bw), not per call. Each channel's
// CTA holds its SM for the whole kernel, the latency-bound part too (a multi-node ring waits 14 us per network
// step, tuning.cc hwLatencies), so the SMs are the path's bus bandwidth / 11.9 GB/s (not rounded to whole
// channels), held for the collective's full duration; the HBM traffic follows the bytes actually moved.
// The compute-bound kernels lose the larger of the two shares: beside an all-gather on A100-80GB NVLink, a GEMM
// took 2.08 ms against 1.18 ms alone and an attention kernel 0.33 against 0.18 ms (NVIDIA/nccl issue #1428; the
// maintainer: "they're competing for memory bandwidth"), a loss of 43-45%, which the HBM share gives (3 x ~230 GB/s
// of busbw over 2039 x 0.833 GB/s = 41%) and the SM share (~19 of 108 SMs, 18%) does not.
double overlap_slowdown_seconds(const ScheduleInputs& in, const CommGroup& g, const CollectiveCost& cost,
                                double overlapped_s) {
    if (!(overlapped_s > 0) || !(cost.busbw_GBps > 0) || in.rates.sm_count <= 1) return 0;
    const double ctas = std::min(std::max(path_bus_GBps(g), cost.busbw_GBps) / kNcclBusGBpsPerSm, kNcclMaxChannels);
    const double sm_share = std::min(1.0, ctas / double(in.rates.sm_count));
    const double hbm_share = std::min(1.0, kNcclHbmCrossings * cost.busbw_GBps * 1e9 / in.rates.memory_Bps);
    const StageWork& s = in.stage;
    const double compute_bound_s = s.forward.matmul_s + s.forward.attention_s + s.backward.matmul_s +
                                   s.backward.attention_s + s.recompute.matmul_s + s.recompute.attention_s;
    const double compute_share = s.gpu_s > 0 ? compute_bound_s / s.gpu_s : 1;
    // A collective slows only kernels: overlap beyond the step's kernel time ran while the stream waited for the
    // host (the windows include a host-bound phase's waiting) and takes nothing from anyone.
    const double beside_kernels_s = std::min(overlapped_s, in.grad_accumulation * s.gpu_s);
    return beside_kernels_s * (compute_share * std::max(sm_share, hbm_share) + (1 - compute_share) * hbm_share);
}

}  // namespace

void add_overlap_slowdown(Schedule& s, const ScheduleInputs& in, const CommGroup& g, const CollectiveCost& cost,
                          double overlapped_s) {
    s.ledger.add("compute slowed by overlapped collectives (NCCL SMs and HBM traffic)",
                 overlap_slowdown_seconds(in, g, cost, overlapped_s), comm_resource(g, cost));
}

}  // namespace ftb
