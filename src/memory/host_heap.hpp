// What a CPU training process keeps from the kernel above what its tensors use: glibc malloc's heap retention.
// PyTorch's CPU allocator takes every tensor from malloc (c10/core/impl/alloc_cpu.cpp: posix_memalign, 64-byte
// alignment). glibc serves a request from an mmap of its own when it is at least the mmap threshold, and returns
// that mapping on free; smaller requests come from the heap, whose freed space stays with the process. The
// threshold starts at 128 KiB and rises to the size of each mmapped chunk freed, up to 32 MiB on 64-bit
// (glibc malloc/malloc.c: DEFAULT_MMAP_THRESHOLD_MAX, the dynamic threshold in __libc_free), so after the first
// step every tensor under 32 MiB is a heap tensor.
#pragma once
#include "ftbound/job.hpp"
#include "memory/step_walk.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

// The largest request glibc ever serves from its heap (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
inline constexpr double kGlibcMmapThresholdMaxBytes = 32.0 * 1048576;

// Bytes of one step's transient tensors that come from the heap: saved activations, the logits of the loss,
// and the gradients that `zero_grad(set_to_none=True)` (PyTorch 2.x default, torch/optim/optimizer.py) frees
// each step, each counted only when its single tensor is under the mmap threshold maximum.
double heap_transient_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s);

// Heap bytes the process holds above its live tensors at the step's peak. ASSUMPTION, not fitted: one more
// copy of the heap's transient bytes. Measured on this project's CPU grid (validation/measured/cpu-vm): held /
// transient from 0.50 to 1.9 over 22 cases, median 1.05; tools/groundtruth/heap_trace.py shows the held space
// opening within the first step's forward (its freed intermediates), not only beside the previous step's holes.
// With the dynamic threshold turned off (MALLOC_MMAP_THRESHOLD_=131072) the 23M full case's RSS fell from
// 0.861 to 0.704 GiB, to within 0.044 GiB of imported runtime + live peak.
double glibc_heap_retained_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s);

}  // namespace ftb
