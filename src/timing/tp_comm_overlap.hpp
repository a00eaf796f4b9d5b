// Tensor-parallel collectives under Transformer Engine userbuffers (job key parallel.tp_comm_overlap): each
// sequence-parallel all-gather or reduce-scatter is split into as many chunks as its GEMM, and chunk i's transfer
// runs while chunk i-1 (all-gather) or chunk i+1 (reduce-scatter) is multiplied. What stays on the critical path:
#pragma once

namespace ftb {

// An all-gather feeding a GEMM (the column-parallel linears' input in forward, the row-parallel linears' output
// gradient in backward): the GEMM starts on the local chunk; each of the other chunks - 1 waits only for the part
// of its transfer the previous chunk's GEMM does not cover.
double overlapped_all_gather_exposed_s(double comm_s, double gemm_s, double chunks);

// A reduce-scatter following a GEMM (the row-parallel linears' output in forward, the column-parallel linears'
// input gradient in backward): each chunk's partial result travels while the next chunk is multiplied, so the
// last chunk's transfer is always exposed, plus what the GEMM chunks do not cover.
double overlapped_reduce_scatter_exposed_s(double comm_s, double gemm_s, double chunks);

// A pipeline send/recv posted ahead of the model chunk that needs it (FrameworkProfile::pipeline_p2p_overlap): only
// what outlasts the compute issued in between, `compute_s`, is exposed.
double overlapped_send_recv_exposed_s(double transfer_s, double compute_s);

}  // namespace ftb
