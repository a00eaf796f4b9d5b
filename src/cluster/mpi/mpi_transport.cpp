// libftbound_mpi.so: MPI point-to-point messages and collectives with deadlines (mpi_transport_api.h). Every wait is
// a non-blocking MPI call polled with MPI_Test until it completes or its deadline passes; MPI cannot cancel a
// collective, so after a timeout the caller ends the job with ftb_mpi_abort.
#include "mpi_transport_api.h"

#include <mpi.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

MPI_Comm g_group = MPI_COMM_NULL;  // collectives run here

double now() { return MPI_Wtime(); }

void pause_between_polls(int spin) {
    if (spin) {
        sched_yield();  // oversubscribed nodes (more ranks than cores) still make progress
        return;
    }
    timespec ts{0, 200 * 1000};  // 0.2 ms: idle ranks leave the cores to the ranks being timed
    nanosleep(&ts, nullptr);
}

int wait_for(MPI_Request* request, double timeout_s, int spin) {
    const double deadline = now() + timeout_s;
    for (;;) {
        int done = 0;
        if (MPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return FTB_MPI_FAILED;
        if (done) return FTB_MPI_OK;
        if (now() > deadline) return FTB_MPI_TIMEOUT;
        pause_between_polls(spin);
    }
}

void copy_message(const std::string& s, char* out, int len) {
    if (!out || len <= 0) return;
    std::strncpy(out, s.c_str(), static_cast<size_t>(len) - 1);
    out[len - 1] = 0;
}

bool fits_int(size_t n) { return n <= static_cast<size_t>(2147483647); }

}  // namespace

extern "C" {

int ftb_mpi_abi(void) { return FTB_MPI_ABI; }

int ftb_mpi_init(int* rank, int* size, char* version, int version_len, char* error, int error_len) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        copy_message("MPI_Init_thread failed", error, error_len);
        return FTB_MPI_FAILED;
    }
    // Errors come back as return codes (and become `error:` lines), instead of aborting the job from inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_Comm_dup(MPI_COMM_WORLD, &g_group);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string v(lib, static_cast<size_t>(std::max(0, len)));
    v = v.substr(0, v.find_first_of(",\n"));
    copy_message(v, version, version_len);
    return FTB_MPI_OK;
}

int ftb_mpi_send(int dst, int tag, const void* buf, size_t bytes, double timeout_s, int spin) {
    if (!fits_int(bytes)) return FTB_MPI_FAILED;
    MPI_Request r;
    if (MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r) != MPI_SUCCESS) return FTB_MPI_FAILED;
    return wait_for(&r, timeout_s, spin);
}

int ftb_mpi_probe(int src, int tag, size_t* bytes, double timeout_s, int spin) {
    const double deadline = now() + timeout_s;
    for (;;) {
        int found = 0;
        MPI_Status st;
        if (MPI_Iprobe(src, tag, MPI_COMM_WORLD, &found, &st) != MPI_SUCCESS) return FTB_MPI_FAILED;
        if (found) {
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            *bytes = static_cast<size_t>(count);
            return FTB_MPI_OK;
        }
        if (now() > deadline) return FTB_MPI_TIMEOUT;
        pause_between_polls(spin);
    }
}

int ftb_mpi_recv(int src, int tag, void* buf, size_t bytes, double timeout_s, int spin) {
    if (!fits_int(bytes)) return FTB_MPI_FAILED;
    MPI_Request r;
    if (MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, src, tag, MPI_COMM_WORLD, &r) != MPI_SUCCESS) return FTB_MPI_FAILED;
    return wait_for(&r, timeout_s, spin);
}

int ftb_mpi_group(const int* ranks, int count) {
    MPI_Group world, sub;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, count, ranks, &sub);
    MPI_Comm next = MPI_COMM_NULL;
    // Collective over the listed ranks only (MPI-3): ranks left out (dead or stuck) need not take part.
    const int rc = MPI_Comm_create_group(MPI_COMM_WORLD, sub, 7, &next);
    MPI_Group_free(&sub);
    MPI_Group_free(&world);
    if (rc != MPI_SUCCESS || next == MPI_COMM_NULL) return FTB_MPI_FAILED;
    MPI_Comm_set_errhandler(next, MPI_ERRORS_RETURN);
    if (g_group != MPI_COMM_NULL) MPI_Comm_free(&g_group);
    g_group = next;
    return FTB_MPI_OK;
}

int ftb_mpi_barrier(double timeout_s) {
    MPI_Request r;
    if (MPI_Ibarrier(g_group, &r) != MPI_SUCCESS) return FTB_MPI_FAILED;
    return wait_for(&r, timeout_s, 0);
}

int ftb_mpi_collective(int op, const void* send, void* recv, size_t bytes, double timeout_s) {
    int n = 0;
    MPI_Comm_size(g_group, &n);
    const size_t floats = bytes / sizeof(float);
    const size_t per_rank = floats / static_cast<size_t>(n);
    if (!fits_int(floats) || per_rank == 0) return FTB_MPI_FAILED;
    const int count = static_cast<int>(floats), part = static_cast<int>(per_rank);
    MPI_Request r;
    int rc = MPI_ERR_OTHER;
    switch (op) {
        case FTB_MPI_ALL_REDUCE: rc = MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM, g_group, &r); break;
        case FTB_MPI_ALL_GATHER: rc = MPI_Iallgather(send, part, MPI_FLOAT, recv, part, MPI_FLOAT, g_group, &r); break;
        case FTB_MPI_REDUCE_SCATTER:
            rc = MPI_Ireduce_scatter_block(send, recv, part, MPI_FLOAT, MPI_SUM, g_group, &r);
            break;
        case FTB_MPI_ALL_TO_ALL: rc = MPI_Ialltoall(send, part, MPI_FLOAT, recv, part, MPI_FLOAT, g_group, &r); break;
        default: return FTB_MPI_FAILED;
    }
    if (rc != MPI_SUCCESS) return FTB_MPI_FAILED;
    return wait_for(&r, timeout_s, 1);
}

void ftb_mpi_finalize(void) {
    if (g_group != MPI_COMM_NULL) MPI_Comm_free(&g_group);
    MPI_Finalize();
}

void ftb_mpi_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

}  // extern "C"
