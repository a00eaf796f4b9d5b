// Transformer Engine userbuffers overlap (tp_comm_overlap.hpp). TransformerEngine
// transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp: CommOverlapP2PBase::split_overlap_ag (ring
// exchange: the GEMM of the chunk in hand runs while the next chunk is sent/received) and
// CommOverlapBase::split_overlap_rs (GEMM chunk i on the compute streams, then its reduce-scatter on the comm
// stream while chunk i+1 computes; the main stream waits for both at the end). Megatron-Core turns it on with
// `tp_comm_overlap` (TransformerConfig), NeMo 1 with `ub_tp_comm_overlap`; the chunk count is the TP size.
#include "timing/tp_comm_overlap.hpp"

#include <algorithm>

namespace ftb {

double overlapped_all_gather_exposed_s(double comm_s, double gemm_s, double chunks) {
    if (chunks <= 1) return 0;   // nothing to gather
    // comm_s moves the chunks - 1 remote chunks; each hides under the GEMM of the chunk before it.
    const double per_chunk_comm = comm_s / (chunks - 1), per_chunk_gemm = gemm_s / chunks;
    return (chunks - 1) * std::max(0.0, per_chunk_comm - per_chunk_gemm);
}

double overlapped_reduce_scatter_exposed_s(double comm_s, double gemm_s, double chunks) {
    if (chunks <= 1) return 0;
    const double per_chunk_comm = comm_s / chunks, per_chunk_gemm = gemm_s / chunks;
    return per_chunk_comm + (chunks - 1) * std::max(0.0, per_chunk_comm - per_chunk_gemm);
}

double overlapped_send_recv_exposed_s(double transfer_s, double compute_s) {
    return std::max(0.0, transfer_s - compute_s);
}

}  // namespace ftb
