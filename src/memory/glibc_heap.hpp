// A model of glibc malloc's main arena for the requests a CPU training step makes (tensors of kilobytes to
// gigabytes), to tell how much memory the process holds from the kernel beside its live tensors.
//
// The rules, from glibc malloc/malloc.c (2.31-2.38, the same in each):
// - request2size: a chunk is the request plus one size word (SIZE_SZ = 8), rounded up to 16 bytes.
// - _int_malloc: a free chunk is taken best-fit (the smallest free chunk that is large enough; the unsorted
//   bin's exact fits first, then the size-sorted large bins), and what is left of it stays a free chunk;
//   failing that the request is split from the top chunk when the top holds it plus MINSIZE.
// - sysmalloc: only when neither serves it, a request of at least mp_.mmap_threshold (DEFAULT_MMAP_THRESHOLD
//   128 KiB at start) gets an mmap of its own (request + SIZE_SZ rounded up to pages); a smaller one grows the
//   top by sbrk (request + top_pad + MINSIZE less the top's size, rounded up to pages).
// - __libc_free of an mmapped chunk unmaps it, and when the chunk is larger than the threshold and at most
//   DEFAULT_MMAP_THRESHOLD_MAX (32 MiB on 64-bit) raises mp_.mmap_threshold to its size and
//   mp_.trim_threshold to twice that (the dynamic threshold).
// - _int_memalign (posix_memalign, which c10/core/impl/alloc_cpu.cpp calls with 64-byte alignment) asks
//   _int_malloc for the request + alignment + MINSIZE, frees the misaligned lead (at least MINSIZE) and the
//   tail beyond the request (when more than MINSIZE); of a mapping it keeps all, its chunk size less the lead.
// - _int_free of an arena chunk merges it with free neighbours (and into the top when it borders the top);
//   when the merged chunk is at least FASTBIN_CONSOLIDATION_THRESHOLD (64 KiB) and the top is at least
//   mp_.trim_threshold, systrim gives the top back down to top_pad. Free chunks below the top stay resident.
// ASSUMPTION (not fitted): memalign's lead and tail pieces are at most 112 bytes, a size only the process's small
// objects use (autograd nodes' edges, shared_ptr control blocks; they take such chunks first, from tcache and
// the fastbins). While they are held (`hold_pieces`), a freed tensor's chunk cannot merge with them and is
// 96 bytes short of the next request of its own size, so that request goes elsewhere. cpu_step_heap.cpp holds
// the pieces of the forward, whose graph's nodes live as long as the loss tensor (backward() frees only their
// saved tensors; cpu_collect.py's step() drops `loss` after opt.step()), and frees the pieces of backward and the
// optimizer at once. tools/groundtruth/piece_holders.py (an LD_PRELOAD log of every malloc, 23M full 1 x 256, one
// thread, three runs) supports both halves: of the small objects holding pieces of step 1's forward tensors and
// still live after the forward, 188-197 were freed at `del loss` (after opt.step()), 84-117 during backward; of
// the 489 backward tensors freed in backward, 28-50 had a piece still taken. tools/groundtruth/heap_trace.py on
// this project's CPU VM: on 23M LoRA 4 x 256 (one thread, --free-chunks), at the first forward's loss the main arena
// held 0.221 GiB free, 226 MiB of it in 155 chunks of 0.75-1.5 MiB, just under the forward's 1.5 MiB
// (tokens x hidden) tensors, and later steps' forwards held no more (the space opened in one forward is reused by
// the next). On 23M full 1 x 256 (--phases-only) the forward's free bytes match the replay's and at the end of
// backward the process holds 0.05-0.10 GiB more free than the replay: what else backward's small objects hold is
// not modelled (docs/validation.md, CPU).
// Not modelled: the small objects themselves, other threads' arenas (PyTorch allocates a step's tensors on the
// calling thread: CPU autograd runs on it).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "memory/free_chunks.hpp"

namespace ftb {

class GlibcHeap {
public:
    // malloc; returns a handle for `release`.
    int64_t allocate(int64_t request_bytes);
    // posix_memalign.
    int64_t allocate_aligned(int64_t request_bytes, int64_t alignment_bytes);
    void release(int64_t handle);

    // Bytes the process holds from the kernel for the heap: the arena up to the break and the mmapped chunks.
    int64_t resident_bytes() const { return arena_bytes_ + mmapped_bytes_; }
    int64_t pinned_bytes() const { return pinned_bytes_; }
    // The small objects that hold memalign's pieces are gone (the autograd graph freed): the pieces are freed.
    void release_pieces();
    // Whether memalign's small pieces are held (by the autograd graph's objects) or freed at once.
    void hold_pieces(bool hold) { hold_pieces_ = hold; }
    // Bytes of the chunks in use (chunk sizes, so a little above the requests).
    int64_t in_use_bytes() const { return in_use_bytes_; }
    int64_t peak_resident_bytes() const { return peak_resident_bytes_; }
    int64_t peak_in_use_bytes() const { return peak_in_use_bytes_; }
    int64_t mmap_threshold_bytes() const { return mmap_threshold_; }
    int64_t free_bytes() const { return free_.total_bytes(); }   // free chunks below the top

private:
    struct Chunk {
        int64_t address = 0, bytes = 0;   // bytes -1: released
        bool mmapped = false;
        int64_t mapping_lead = 0;   // of a mapping: the bytes before the aligned chunk
    };
    Chunk take_chunk(int64_t chunk_bytes);
    int64_t keep(const Chunk& c);
    void free_piece(int64_t address, int64_t bytes);
    int64_t take_free_chunk(int64_t& chunk_bytes);   // -1 when none fits; a remainder under MINSIZE joins the chunk
    int64_t take_from_top(int64_t chunk_bytes);
    void free_arena_chunk(int64_t address, int64_t bytes);
    void trim_top();
    void note_peaks();

    FreeChunks free_;
    std::vector<Chunk> chunks_;   // by handle
    int64_t top_address_ = 0;     // the top chunk runs from here to the break
    int64_t arena_bytes_ = 0;     // the break, from the arena's start at 0
    int64_t mmapped_bytes_ = 0;
    int64_t in_use_bytes_ = 0;
    int64_t pinned_bytes_ = 0;   // memalign's lead and tail pieces (see the assumption above)
    std::vector<std::pair<int64_t, int64_t>> pieces_;   // (address, bytes)
    bool hold_pieces_ = true;
    int64_t peak_resident_bytes_ = 0, peak_in_use_bytes_ = 0;
    int64_t mmap_threshold_ = 128 * 1024;   // DEFAULT_MMAP_THRESHOLD
    int64_t trim_threshold_ = 128 * 1024;   // DEFAULT_TRIM_THRESHOLD
};

}  // namespace ftb
