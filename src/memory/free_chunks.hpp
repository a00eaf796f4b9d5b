// The free chunks of the glibc heap model (memory/glibc_heap.hpp), indexed for its two questions: best fit (the
// smallest chunk at least a size, the lowest address among equal sizes) and merging (the free chunk that starts
// where a freed one ends, and the one that ends where it starts).
//
// Why not std::set/std::map: a CPU plan replays thousands of mallocs and frees per shape (cpu_step_heap.cpp) and a
// search replays a shape per configuration; with about a thousand free chunks (memalign's small pieces pile up,
// never large enough for a tensor) the trees' node allocations and pointer chasing were 80% of a CPU plan.
// Here (size, address) pairs are kept in a vector of small sorted blocks, and addresses in two open-addressing
// hash tables. Each query returns what the ordered sets returned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ftb {

// int64 -> int64 for non-negative keys: linear probing, deletion by backward shift (no tombstones). Fibonacci
// hashing of the address (chunk addresses are multiples of 16: the low bits carry nothing).
class AddressTable {
public:
    AddressTable();
    int64_t find(int64_t key) const;   // -1 when absent
    void insert(int64_t key, int64_t value);   // key absent
    void erase(int64_t key);                   // key present
    void clear();
    template <typename F>
    void for_each(F f) const {
        for (const auto& [key, value] : slots_)
            if (key >= 0) f(key, value);
    }

private:
    size_t slot(int64_t key) const { return size_t(((uint64_t(key) >> 4) * 0x9E3779B97F4A7C15ull) >> shift_); }
    void grow();
    std::vector<std::pair<int64_t, int64_t>> slots_;   // key -1: empty
    size_t size_ = 0;
    int shift_ = 0;   // 64 - log2(slots)
};

// An ordered set of (size, address) pairs as a short vector of sorted blocks of at most 2 x kHalfBlock pairs (a
// B+ tree of depth two): an insertion or removal moves at most one block's pairs, and nothing is allocated once the
// blocks exist.
class SortedPairs {
public:
    using Pair = std::pair<int64_t, int64_t>;
    void insert(Pair p);   // p absent
    void erase(Pair p);    // p present
    // The first pair not less than `key`, or (-1, -1).
    Pair lower_bound(Pair key) const;

private:
    static constexpr size_t kHalfBlock = 32;
    size_t block_for(Pair key) const;   // the first block whose last pair is not less than key
    std::vector<std::vector<Pair>> blocks_;
    std::vector<Pair> lasts_;   // each block's last pair, searched without touching the blocks
};

class FreeChunks {
public:
    void add(int64_t address, int64_t bytes);
    void remove(int64_t address, int64_t bytes);
    // The best fit for `bytes`: (size, address) of the smallest free chunk that holds it, or (-1, -1).
    std::pair<int64_t, int64_t> best_fit(int64_t bytes);
    int64_t bytes_at(int64_t address) const { return by_start_.find(address); }        // -1 when none starts there
    int64_t start_ending_at(int64_t end) const { return by_end_.find(end); }           // -1 when none ends there
    int64_t total_bytes() const { return total_bytes_; }

private:
    // Chunks under this size stay out of by_size_: memalign's lead and tail pieces (32-112 bytes, a thousand of
    // them on a 16-block model) are the bulk of the free chunks, and every request the CPU step replay makes is at
    // least 128 bytes (a 64-byte aligned one asks for its chunk + 64 + MINSIZE), so they never serve one. A
    // smaller request still gets its best fit, from a scan (exact, and never on the replay's path).
    static constexpr int64_t kIndexedMinBytes = 128;
    std::pair<int64_t, int64_t> best_small_fit(int64_t bytes) const;

    void flush_pending();

    SortedPairs by_size_;              // (bytes, address) of the chunks of at least kIndexedMinBytes
    // The last chunk added, not yet in by_size_: a chunk is often removed again before the next best fit (a
    // split's remainder that memalign's freed tail then merges with), and then by_size_ never sees it.
    std::pair<int64_t, int64_t> pending_{-1, -1};
    AddressTable by_start_, by_end_;   // start -> bytes, end -> start
    int64_t total_bytes_ = 0;
};

}  // namespace ftb
