/* A reference STREAM-style triad to check `ftbound probe`'s host.memory_bandwidth_GBps against.
 * Written for ftbound (not the STREAM source); it follows STREAM's rules as McCalpin states them
 * (https://www.cs.virginia.edu/stream/ref.html): each array several times the caches, OpenMP static
 * schedule, arrays first touched by the threads that use them, triad a = b + s*c counted as
 * 24 bytes per element, best and median of the timed repetitions after one warm-up.
 *
 *   cc -O3 -march=native -fopenmp tools/stream_ref.c -o stream_ref
 *   OMP_NUM_THREADS=2 OMP_PROC_BIND=close ./stream_ref [MiB per array, default 128] [repetitions, default 10]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 128;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    if (mib == 0 || reps < 1) {
        fprintf(stderr, "usage: stream_ref [MiB per array] [repetitions]\n");
        return 2;
    }
    size_t n = mib * 1024 * 1024 / sizeof(double);
    double* a = aligned_alloc(64, n * sizeof(double));
    double* b = aligned_alloc(64, n * sizeof(double));
    double* c = aligned_alloc(64, n * sizeof(double));
    double* rate = malloc((size_t)reps * sizeof(double));
    if (!a || !b || !c || !rate) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    const double scalar = 3.0;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    for (int r = -1; r < reps; ++r) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
        double t = omp_get_wtime() - t0;
        if (r >= 0) rate[r] = 3.0 * sizeof(double) * (double)n / t / 1e9;
    }
    if (a[n / 2] != 1.0 + scalar * 2.0) {
        fprintf(stderr, "wrong result\n");
        return 1;
    }
    qsort(rate, (size_t)reps, sizeof(double), compare_doubles);
    double median = reps % 2 ? rate[reps / 2] : 0.5 * (rate[reps / 2 - 1] + rate[reps / 2]);
    printf("threads %d  array %zu MiB  triad best %.2f GB/s  median %.2f GB/s\n", omp_get_max_threads(), mib,
           rate[reps - 1], median);
    free(a), free(b), free(c), free(rate);
    return 0;
}
