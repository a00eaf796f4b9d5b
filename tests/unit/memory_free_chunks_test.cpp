// The free-chunk index of the glibc heap model (src/memory/free_chunks.hpp) against the ordered std::set/std::map
// it replaced: on random adds, removals and best-fit queries, every answer must be the same (the CPU heap replay's
// figures depend on each best-fit choice).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "memory/free_chunks.hpp"

namespace ftb {
namespace {

// What glibc_heap.cpp kept before: (bytes, address) ordered, and address -> bytes.
struct Reference {
    std::set<std::pair<int64_t, int64_t>> by_size;
    std::map<int64_t, int64_t> by_address;

    std::pair<int64_t, int64_t> best_fit(int64_t bytes) const {
        const auto it = by_size.lower_bound({bytes, -1});
        return it == by_size.end() ? std::pair<int64_t, int64_t>{-1, -1} : *it;
    }
    int64_t start_ending_at(int64_t end) const {
        auto it = by_address.lower_bound(end);
        if (it == by_address.begin()) return -1;
        --it;
        return it->first + it->second == end ? it->first : -1;
    }
};

TEST(FreeChunks, AnswersAsTheOrderedSetsDid) {
    std::mt19937_64 rng(12345);
    FreeChunks chunks;
    Reference ref;
    // Disjoint slots of 4 KiB; a chunk's size is a multiple of 16 within its slot, small ones (pieces) common.
    std::uniform_int_distribution<int64_t> slot(0, 5000), small(2, 7), large(8, 255), op(0, 9);
    for (int i = 0; i < 200000; ++i) {
        const int64_t address = slot(rng) * 4096;
        const auto have = ref.by_address.find(address);
        const int o = int(op(rng));
        if (o < 4 && have == ref.by_address.end()) {
            const int64_t bytes = 16 * (o == 0 ? small(rng) : large(rng));
            chunks.add(address, bytes);
            ref.by_address[address] = bytes;
            ref.by_size.insert({bytes, address});
        } else if (o < 7 && have != ref.by_address.end()) {
            chunks.remove(address, have->second);
            ref.by_size.erase({have->second, address});
            ref.by_address.erase(have);
        } else {
            const int64_t want = 16 * (o == 9 ? small(rng) : large(rng));
            ASSERT_EQ(chunks.best_fit(want), ref.best_fit(want)) << "step " << i;
        }
        const int64_t probe = slot(rng) * 4096;
        const auto at = ref.by_address.find(probe);
        ASSERT_EQ(chunks.bytes_at(probe), at == ref.by_address.end() ? -1 : at->second);
        if (at != ref.by_address.end()) {
            ASSERT_EQ(chunks.start_ending_at(probe + at->second), ref.start_ending_at(probe + at->second));
        }
        ASSERT_EQ(chunks.start_ending_at(probe + 8), ref.start_ending_at(probe + 8));
    }
    int64_t total = 0;
    for (const auto& [address, bytes] : ref.by_address) total += bytes;
    EXPECT_EQ(chunks.total_bytes(), total);
}

}  // namespace
}  // namespace ftb
