/* The C interface of libftbound_mpi.so, which `ftbound probe --cluster` loads with dlopen. Keeping MPI behind this
 * interface lets ftbound build and run where no MPI is installed, and keeps libmpi out of every other command.
 *
 * Every call that waits takes a timeout and returns FTB_MPI_TIMEOUT when it passes: a rank that hangs or dies is
 * reported, it never hangs the others. `spin` != 0 polls without sleeping (timed operations); 0 sleeps between
 * polls (waiting for a turn or a control message), so idle ranks leave the cores to the ranks being timed.
 * Collectives and the barrier run over the group set by ftb_mpi_group (every rank at first). */
#ifndef FTBOUND_MPI_TRANSPORT_API_H
#define FTBOUND_MPI_TRANSPORT_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTB_MPI_ABI 1
#define FTB_MPI_OK 0
#define FTB_MPI_TIMEOUT 1
#define FTB_MPI_FAILED 2

/* Collectives, in the sizes of nccl-tests (doc/PERFORMANCE.md): `bytes` is the all-reduce buffer, the all-gather
 * output, the reduce-scatter input, the all-to-all send buffer of one rank; a multiple of 4 x group size. */
#define FTB_MPI_ALL_REDUCE 0
#define FTB_MPI_ALL_GATHER 1
#define FTB_MPI_REDUCE_SCATTER 2
#define FTB_MPI_ALL_TO_ALL 3

int ftb_mpi_abi(void);
/* MPI_Init_thread; the world rank and size, and the library's version string. */
int ftb_mpi_init(int* rank, int* size, char* version, int version_len, char* error, int error_len);
int ftb_mpi_send(int dst, int tag, const void* buf, size_t bytes, double timeout_s, int spin);
/* Waits for a message from `src` with `tag` and says its size (then receive it with ftb_mpi_recv). */
int ftb_mpi_probe(int src, int tag, size_t* bytes, double timeout_s, int spin);
int ftb_mpi_recv(int src, int tag, void* buf, size_t bytes, double timeout_s, int spin);
/* Restricts collectives to these world ranks (sorted, this rank among them); every listed rank calls it. */
int ftb_mpi_group(const int* ranks, int count);
int ftb_mpi_barrier(double timeout_s);
int ftb_mpi_collective(int op, const void* send, void* recv, size_t bytes, double timeout_s);
/* After every rank answered: MPI_Finalize. After a failure (a rank that never answered may be stuck in a
 * collective): MPI_Abort, which ends every process of the job, the stuck one too. */
void ftb_mpi_finalize(void);
void ftb_mpi_abort(int code);

#ifdef __cplusplus
}
#endif

#endif
