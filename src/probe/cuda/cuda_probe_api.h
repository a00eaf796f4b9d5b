/* The C interface of libftbound_cuda_probe.so, which ftbound loads with dlopen only when NVML reports a
 * GPU. Keeping CUDA behind this interface lets ftbound build and run on machines without CUDA.
 *
 * ftb_cuda_probe_run returns a malloc'd JSON document (free it with ftb_cuda_probe_free):
 * {"abi": 1, "error": null|"...",
 *  "devices": [{"index", "name", "pci_bus_id", "memory_bytes", "cc_major", "cc_minor",
 *               "h2d_pinned_GBps": [samples], "d2h_pinned_GBps": [...], "h2d_pageable_GBps": [...],
 *               "d2h_pageable_GBps": [...], "d2d_GBps": [...], "h2d_latency_us": [...],
 *               "gemm": [{"dtype", "library", "m", "n", "k", "tflops": [...]} | {"dtype", "m", "n", "k", "error"}]}],
 *  "peer": [{"src", "dst", "peer_access", "GBps": [...]}],
 *  "nccl": [{"op": "all_reduce"|"all_gather", "bytes", "gpus", "busbw_GBps": [...]}],
 *  "nccl_skipped": null|"..."}
 * Copy bandwidths count the bytes moved once; d2d counts bytes read plus bytes written (the HBM traffic). */
#ifndef FTBOUND_CUDA_PROBE_API_H
#define FTBOUND_CUDA_PROBE_API_H

#ifdef __cplusplus
extern "C" {
#endif

#define FTB_CUDA_PROBE_ABI 1

int ftb_cuda_probe_abi(void);
/* quick != 0: smaller buffers and fewer repetitions. */
char* ftb_cuda_probe_run(int quick);
void ftb_cuda_probe_free(char* json);

#ifdef __cplusplus
}
#endif

#endif
