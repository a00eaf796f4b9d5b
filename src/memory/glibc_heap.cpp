#include "memory/glibc_heap.hpp"

#include <algorithm>

namespace ftb {

namespace {

constexpr int64_t kSizeWordBytes = 8;                         // SIZE_SZ on 64-bit
constexpr int64_t kMinChunkBytes = 32;                        // MINSIZE on 64-bit
constexpr int64_t kChunkAlignBytes = 16;                      // MALLOC_ALIGNMENT on 64-bit
constexpr int64_t kPageBytes = 4096;                          // x86-64 page
constexpr int64_t kTopPadBytes = 128 * 1024;                  // DEFAULT_TOP_PAD (sysdeps/generic/malloc-machine.h)
constexpr int64_t kMmapThresholdMaxBytes = 32 * 1048576;      // DEFAULT_MMAP_THRESHOLD_MAX, 64-bit
constexpr int64_t kConsolidationBytes = 64 * 1024;            // FASTBIN_CONSOLIDATION_THRESHOLD
constexpr int64_t kSmallObjectBytes = 128;                    // DEFAULT_MXFAST on 64-bit: fastbin chunks

int64_t round_up(int64_t bytes, int64_t unit) { return (bytes + unit - 1) / unit * unit; }

// request2size
int64_t chunk_bytes_for(int64_t request_bytes) {
    return std::max(kMinChunkBytes, round_up(request_bytes + kSizeWordBytes, kChunkAlignBytes));
}

}  // namespace

int64_t GlibcHeap::allocate(int64_t request_bytes) { return keep(take_chunk(chunk_bytes_for(request_bytes))); }

int64_t GlibcHeap::allocate_aligned(int64_t request_bytes, int64_t alignment_bytes) {
    const int64_t bytes = chunk_bytes_for(request_bytes);
    Chunk c = take_chunk(bytes + alignment_bytes + kMinChunkBytes);
    const int64_t user = c.address + 2 * kSizeWordBytes;   // chunk2mem
    if (user % alignment_bytes != 0) {
        int64_t aligned = (user + alignment_bytes - 1) / alignment_bytes * alignment_bytes - 2 * kSizeWordBytes;
        if (aligned - c.address < kMinChunkBytes) aligned += alignment_bytes;
        const int64_t lead = aligned - c.address;
        if (!c.mmapped) free_piece(c.address, lead);
        c.address = aligned;
        c.bytes -= lead;   // a mapping keeps its lead, out of its chunk size
        if (c.mmapped) c.mapping_lead = lead;
    }
    if (!c.mmapped && c.bytes > bytes + kMinChunkBytes) {
        free_piece(c.address + bytes, c.bytes - bytes);
        c.bytes = bytes;
    }
    return keep(c);
}

// _int_malloc's order: a free chunk, the top, then sysmalloc (a mapping of its own at the threshold).
GlibcHeap::Chunk GlibcHeap::take_chunk(int64_t bytes) {
    Chunk c{0, bytes, false};
    c.address = take_free_chunk(c.bytes);
    if (c.address < 0) c.address = take_from_top(bytes);
    if (c.address < 0) {
        c.mmapped = true;
        c.bytes = round_up(bytes + kSizeWordBytes, kPageBytes);
        mmapped_bytes_ += c.bytes;
    }
    return c;
}

int64_t GlibcHeap::keep(const Chunk& c) {
    in_use_bytes_ += c.bytes + c.mapping_lead;
    chunks_.push_back(c);
    note_peaks();
    return int64_t(chunks_.size()) - 1;
}

// memalign's lead or tail: a small one stays in use (the assumption in the header), a larger one is freed.
void GlibcHeap::free_piece(int64_t address, int64_t bytes) {
    if (bytes > kSmallObjectBytes || !hold_pieces_) return free_arena_chunk(address, bytes);
    pinned_bytes_ += bytes;
    pieces_.push_back({address, bytes});
}

void GlibcHeap::release_pieces() {
    for (const auto& [address, bytes] : pieces_) free_arena_chunk(address, bytes);
    pieces_.clear();
    pinned_bytes_ = 0;
}

void GlibcHeap::release(int64_t handle) {
    if (handle < 0 || handle >= int64_t(chunks_.size()) || chunks_[size_t(handle)].bytes < 0) return;
    const Chunk c = chunks_[size_t(handle)];
    chunks_[size_t(handle)].bytes = -1;
    in_use_bytes_ -= c.bytes + c.mapping_lead;
    if (!c.mmapped) return free_arena_chunk(c.address, c.bytes);
    mmapped_bytes_ -= c.bytes + c.mapping_lead;
    if (c.bytes > mmap_threshold_ && c.bytes <= kMmapThresholdMaxBytes) {   // __libc_free's dynamic threshold
        mmap_threshold_ = c.bytes;
        trim_threshold_ = 2 * c.bytes;
    }
}

// Best fit: the smallest free chunk that holds the request; the rest of it stays free.
int64_t GlibcHeap::take_free_chunk(int64_t& bytes) {
    const auto [have, address] = free_.best_fit(bytes);
    if (address < 0) return -1;
    free_.remove(address, have);
    if (have - bytes >= kMinChunkBytes) free_.add(address + bytes, have - bytes);
    else bytes = have;
    return address;
}

// Split from the top, growing the arena by sbrk when the request is under the mmap threshold.
int64_t GlibcHeap::take_from_top(int64_t bytes) {
    const int64_t top = arena_bytes_ - top_address_;
    if (top < bytes + kMinChunkBytes) {
        if (bytes >= mmap_threshold_) return -1;
        arena_bytes_ += round_up(bytes + kTopPadBytes + kMinChunkBytes - top, kPageBytes);
    }
    const int64_t address = top_address_;
    top_address_ += bytes;
    return address;
}

void GlibcHeap::free_arena_chunk(int64_t address, int64_t bytes) {
    if (const int64_t next = free_.bytes_at(address + bytes); next >= 0) {
        free_.remove(address + bytes, next);
        bytes += next;
    }
    if (const int64_t prev = free_.start_ending_at(address); prev >= 0) {
        free_.remove(prev, address - prev);
        bytes += address - prev;
        address = prev;
    }
    if (address + bytes == top_address_) top_address_ = address;
    else free_.add(address, bytes);
    if (bytes >= kConsolidationBytes) trim_top();
}

// systrim: the top above top_pad goes back to the kernel once the top reaches the trim threshold.
void GlibcHeap::trim_top() {
    const int64_t top = arena_bytes_ - top_address_;
    if (top < trim_threshold_) return;
    const int64_t area = top - kMinChunkBytes - 1;
    if (area <= kTopPadBytes) return;
    arena_bytes_ -= (area - kTopPadBytes) / kPageBytes * kPageBytes;
}

void GlibcHeap::note_peaks() {
    peak_resident_bytes_ = std::max(peak_resident_bytes_, resident_bytes());
    peak_in_use_bytes_ = std::max(peak_in_use_bytes_, in_use_bytes_);
}

}  // namespace ftb
