/* The C interface of libftbound_nccl.so: the GPU fabric of `ftbound probe --cluster` over NCCL, one GPU per rank.
 * ftbound loads it with dlopen when every node has a GPU for each of its ranks; it is built when nvcc and NCCL are
 * found (no GPU needed to build). The ranks exchange the unique id over the control transport (MPI).
 *
 * Every call that waits takes a timeout: the operation is queued on the rank's stream, and the stream is polled
 * until it finishes or the deadline passes; then the communicator is aborted (ncclCommAbort) and every later call
 * fails, so a rank that hangs or dies is reported, not waited for. Sizes as in nccl-tests (doc/PERFORMANCE.md). */
#ifndef FTBOUND_NCCL_TRANSPORT_API_H
#define FTBOUND_NCCL_TRANSPORT_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTB_NCCL_ABI 1
#define FTB_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

/* FTB_MPI_* codes (mpi_transport_api.h): 0 ok, 1 timeout, 2 failed. Ops as FTB_MPI_ALL_REDUCE ... ALL_TO_ALL. */
int ftb_nccl_abi(void);
int ftb_nccl_device_count(void);
int ftb_nccl_unique_id(char* id);
/* Joins the communicator of `nranks` ranks as `rank` on CUDA device `device`, with device buffers of `max_bytes`. */
int ftb_nccl_init(const char* id, int nranks, int rank, int device, size_t max_bytes, double timeout_s, char* error,
                  int error_len);
int ftb_nccl_collective(int op, size_t bytes, double timeout_s);
int ftb_nccl_send(int peer, size_t bytes, double timeout_s);
int ftb_nccl_recv(int peer, size_t bytes, double timeout_s);
void ftb_nccl_finish(void);

#ifdef __cplusplus
}
#endif

#endif
