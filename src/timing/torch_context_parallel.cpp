// PyTorch's pass-KV context parallelism (torch_context_parallel.hpp). Read from
// torch/distributed/tensor/experimental/_attention.py (_templated_ring_attention, _templated_ring_attention_
// backward, _SDPAMerger, _AllGatherRotater, _AllToAllRotater, _ContextParallelOptions).
#include "timing/torch_context_parallel.hpp"

#include <algorithm>

#include "timing/collective_overlap.hpp"
#include "timing/rates.hpp"

namespace ftb {

namespace {

// _ContextParallelOptions.convert_to_f32 = True: partial outputs merge, and dq/dk/dv accumulate, in fp32.
constexpr double kFp32Bytes = 4;

// Eager merge, per element of the local output (a = activation bytes, f = fp32), on the rank whose every later
// sub-SDPA covers all its queries (the last CP rank, the slowest; the backward's collectives and FSDP's
// reduce-scatter make the others wait for it):
// _SDPAMerger.step casts the block output to fp32 (a + f), then `out - sigmoid(block_lse - lse) * (out -
// block_out)` runs three fp32 kernels (3f + 2f + 3f); the first block's cast (a + f) and results()' cast back
// (f + a) once per pass.
double eager_forward_merge_bytes(double out_elements, int64_t cp, double a) {
    const double f = kFp32Bytes;
    return out_elements * (2 * (a + f) + double(cp - 1) * (a + 9 * f));
}

// Eager backward, per element of dq (q) and of dk (k; dv alike): zeros_like for the three fp32 accumulators (f);
// the first step adds each bf16 gradient into its accumulator (2f + a each) and concatenates dk, dv into the
// buffer sent on (2f per element); each later step adds dk, dv into the half of the received buffer that
// _partial_update touches ((2f + a) / 2), torch.cat rebuilds the whole (2f), concatenates for the next hop (2f),
// adds dq (2f + a); at the end dq and the last received dk/dv go back to the activation dtype (f + a).
double eager_backward_merge_bytes(double q_elements, double k_elements, int64_t cp, double a) {
    const double f = kFp32Bytes;
    const double later = double(cp - 1);
    const double q = q_elements * (f + (2 * f + a) * double(cp) + (f + a));
    const double k_step0 = 2 * (2 * f + a) + 2 * 2 * f;
    const double k_later = 2 * ((2 * f + a) / 2 + 2 * f) + 2 * 2 * f;
    const double k = k_elements * (2 * f + k_step0 + later * k_later + 2 * (f + a));
    return q + k;
}

}  // namespace

// Compiled (torch.compile traces the ring into the block's graph; Inductor fuses each step's elementwise chain
// into one kernel between two SDPA calls): each later step reads the fp32 running output and the block output and
// writes the running output once (2f + a); each backward step reads the received fp32 dk/dv and the new bf16
// gradients and writes the next hop's buffer, and accumulates dq (2f + a each). The k/v concatenation for the
// rotater feeds the one all-gather; in eager it also runs at every later step (`torch.cat([key.flatten(),
// value.flatten()])` before exchange_buffers, which the all-gather rotater then ignores).
PassKvTraffic pass_kv_traffic(double tokens_per_gpu, double q_width, double kv_width, int64_t cp, double act_bytes,
                              bool compiled) {
    PassKvTraffic t;
    const double q_elements = tokens_per_gpu * q_width, k_elements = tokens_per_gpu * kv_width;
    const double local_kv_bytes = 2 * k_elements * act_bytes;
    t.kv_gathered_bytes = local_kv_bytes * double(cp);
    t.dkv_hop_bytes = 2 * k_elements * kFp32Bytes;
    const double concat_steps = compiled ? 1 : double(cp - 1);   // steps 0 .. cp-2 concatenate k and v
    const double concat_bytes = concat_steps * 2 * local_kv_bytes;
    const double fused = 2 * kFp32Bytes + act_bytes;
    t.forward_merge_bytes = concat_bytes + (compiled ? double(cp - 1) * fused * q_elements
                                                     : eager_forward_merge_bytes(q_elements, cp, act_bytes));
    t.backward_merge_bytes = concat_bytes + (compiled ? double(cp) * fused * (q_elements + 2 * k_elements)
                                                      : eager_backward_merge_bytes(q_elements, k_elements, cp, act_bytes));
    return t;
}

// Eager: the all-gather's wait comes at the second sub-SDPA (_AllGatherRotater.next_buffer), so the first, local
// one (1/cp of the block's attention) hides it; in backward dk/dv hop i is waited for after sub-SDPA i+1
// (_templated_ring_attention_backward), hiding under it, and the last hop is waited for after the loop.
// Compiled: functional collectives traced by torch.compile wait at once ("wait_tensor() op is immediately
// called", torch/distributed/_functional_collectives.py _maybe_wrap_tensor), and Inductor moves waits only with
// torch._inductor.config.reorder_for_compute_comm_overlap, False by default: every transfer is exposed.
PassKvExposure pass_kv_exposure(double gather_s, double hop_s, int64_t cp, double forward_attention_s,
                                double backward_attention_s, double forward_passes, bool compiled) {
    PassKvExposure e;
    const double total = (forward_passes + 1) * gather_s + double(cp) * hop_s;
    if (compiled) {
        e.exposed_s = total;
        return e;
    }
    const double forward_step_s = forward_attention_s / double(cp), backward_step_s = backward_attention_s / double(cp);
    e.exposed_s = forward_passes * std::max(0.0, gather_s - forward_step_s) +
                  std::max(0.0, gather_s - backward_step_s) +
                  double(cp - 1) * std::max(0.0, hop_s - backward_step_s) + hop_s;
    e.overlapped_s = total - e.exposed_s;
    return e;
}

void schedule_context_parallel_pass_kv(Schedule& s, const ScheduleInputs& in) {
    const Job& job = in.job;
    const int64_t cp = job.spec.parallel.cp;
    const LayerSpec& l0 = job.model.layers.front();
    const double tp = double(job.spec.parallel.tp);
    // k/v as the SDPA sees them: repeated to every query head (torchtitan's repeat_kv, HF's sdpa path) unless
    // the attention takes GQA itself; the same rule as the saved activations (memory/activations.cpp).
    const bool gqa_kernel = job.spec.train.attention == Attention::flash || job.framework.fused_qkv;
    const double kv_width = double(gqa_kernel ? l0.kv_dim() : l0.q_dim()) / tp;
    const bool compiled = job.spec.train.compile;
    const PassKvTraffic t = pass_kv_traffic(in.tokens_per_gpu, double(l0.q_dim()) / tp, kv_width, cp,
                                            in.set.bytes.act, compiled);
    const CollectiveCost gather = collective_cost(Collective::all_gather, t.kv_gathered_bytes, in.groups.cp);
    const CollectiveCost hop = collective_cost(Collective::send_recv, t.dkv_hop_bytes, in.groups.cp);
    const double layers = layers_per_stage(job), ga = in.grad_accumulation;
    const double forward_passes = in.stage.recompute.attention_s > 0 ? 2 : 1;
    const PassKvExposure e = pass_kv_exposure(gather.seconds, hop.seconds, cp, in.stage.attention_forward_s / layers,
                                              in.stage.attention_backward_s / layers, forward_passes, compiled);
    const double merge_bytes = forward_passes * t.forward_merge_bytes + t.backward_merge_bytes;
    const double merge_s = memory_bound_seconds(merge_bytes, in.rates) / in.scale[Resource::memory_bandwidth];
    s.ledger.add("context-parallel k/v all-gather and dk/dv ring (exposed)", ga * layers * e.exposed_s,
                 comm_resource(in.groups.cp, gather));
    add_overlap_slowdown(s, in, in.groups.cp, hop, ga * layers * e.overlapped_s);
    s.comm_busy_s += ga * layers * (e.exposed_s + e.overlapped_s);
    s.ledger.add("context-parallel output merge and fp32 gradient accumulation", ga * layers * merge_s,
                 Resource::memory_bandwidth);
    // The exposed waits and the merge kernels are on the compute stream inside every micro-batch, so each idle
    // slot of the pipeline bubble lasts them too.
    s.ledger.add("pipeline bubble", pipeline_bubble_slots(job) * layers * (e.exposed_s + merge_s),
                 Resource::pipeline_bubble);
}

}  // namespace ftb
