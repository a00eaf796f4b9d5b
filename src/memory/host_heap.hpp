// What a CPU training process keeps from the kernel above what its tensors use: glibc malloc's heap retention.
// PyTorch's CPU allocator takes every tensor from malloc (c10/core/impl/alloc_cpu.cpp: posix_memalign, 64-byte
// alignment, no caching), so the held space is glibc's: freed chunks below the top of the arena, and the top up
// to the trim threshold. memory/cpu_step_heap.hpp replays the step's allocations, tensor by tensor in the order
// eager PyTorch makes and frees them, through a model of glibc's rules (memory/glibc_heap.hpp).
#pragma once
#include "ftbound/job.hpp"
#include "memory/cpu_step_heap.hpp"
#include "memory/step_walk.hpp"
#include "memory/training_setup.hpp"

namespace ftb {

// The replay's input for one stage: its blocks, the micro-batch, and what trains.
CpuStepShape cpu_step_shape(const Job& job, const TrainingSetup& set, const StageMemory& s);

// Heap bytes the process holds above its live tensors at the step's peak: the replay's largest hold from the
// kernel less its largest sum of live chunks (peak RSS less malloc's peak bytes in use).
double glibc_heap_retained_bytes(const Job& job, const TrainingSetup& set, const StageMemory& s);

// Empties the memo of replayed shapes, so that a benchmark times the replays a fresh process makes.
void forget_cpu_heap_replays();

}  // namespace ftb
