// The glibc heap model (src/memory/glibc_heap.hpp) on short sequences of mallocs and frees, each figure worked
// out by hand from glibc malloc/malloc.c's rules: chunk = request + 8 rounded up to 16; sbrk grows the top by
// chunk + top_pad (128 KiB) + MINSIZE (32) less the top, rounded up to 4096-byte pages; an mmapped chunk is
// chunk + 8 rounded up to pages.
#include <gtest/gtest.h>

#include "memory/glibc_heap.hpp"

namespace ftb {
namespace {

constexpr int64_t kMiB = 1048576;

TEST(GlibcHeap, SmallRequestGrowsTheArenaByTheTopPad) {
    // 1,000 B -> chunk 1,008; sbrk 1,008 + 131,072 + 32 = 132,112 -> 33 pages = 135,168 B.
    GlibcHeap heap;
    heap.allocate(1000);
    EXPECT_EQ(heap.resident_bytes(), 135168);
    EXPECT_EQ(heap.in_use_bytes(), 1008);
}

TEST(GlibcHeap, FirstLargeRequestIsMmappedAndRaisesTheThresholdWhenFreed) {
    // 1 MiB -> chunk 1,048,592 >= 128 KiB and no top: mmapped, 1,048,600 -> 257 pages = 1,052,672 B.
    GlibcHeap heap;
    const int64_t a = heap.allocate(kMiB);
    EXPECT_EQ(heap.resident_bytes(), 1052672);
    heap.release(a);
    EXPECT_EQ(heap.resident_bytes(), 0);
    EXPECT_EQ(heap.mmap_threshold_bytes(), 1052672);
}

TEST(GlibcHeap, AfterTheThresholdRoseTheSameRequestStaysInTheArena) {
    // The second 1 MiB comes from sbrk: 1,048,592 + 131,072 + 32 = 1,179,696 -> 289 pages = 1,183,744 B. Freed, it
    // joins the top, which stays under the trim threshold (2 x 1,052,672): the process keeps it.
    GlibcHeap heap;
    heap.release(heap.allocate(kMiB));
    heap.release(heap.allocate(kMiB));
    EXPECT_EQ(heap.resident_bytes(), 1183744);
    EXPECT_EQ(heap.in_use_bytes(), 0);
    EXPECT_EQ(heap.peak_resident_bytes(), 1183744);
}

TEST(GlibcHeap, FreedChunkBelowALiveOneStaysAsAHole) {
    // Two 100,000 B chunks (100,016 each) from one sbrk of 233,472 B; freeing the lower one leaves a hole the
    // kernel keeps; freeing the upper one too merges all into the top (233,472 >= 128 KiB trim threshold):
    // systrim keeps top_pad, (233,472 - 33 - 131,072) rounded down to pages = 98,304 B go back.
    GlibcHeap heap;
    const int64_t a = heap.allocate(100000), b = heap.allocate(100000);
    EXPECT_EQ(heap.resident_bytes(), 233472);
    heap.release(a);
    EXPECT_EQ(heap.free_bytes(), 100016);
    EXPECT_EQ(heap.resident_bytes(), 233472);
    heap.release(b);
    EXPECT_EQ(heap.free_bytes(), 0);
    EXPECT_EQ(heap.resident_bytes(), 233472 - 98304);
}

TEST(GlibcHeap, BestFitTakesTheSmallestHoleThatHolds) {
    // Holes of 50,016 and 30,016 B between live chunks; a 20,000 B request (20,016) goes to the 30,016 B hole,
    // leaving 10,000 B of it free.
    GlibcHeap heap;
    const int64_t big = heap.allocate(50000);
    heap.allocate(1000);
    const int64_t small = heap.allocate(30000);
    heap.allocate(1000);
    heap.release(big);
    heap.release(small);
    const int64_t resident = heap.resident_bytes();
    heap.allocate(20000);
    EXPECT_EQ(heap.free_bytes(), 50016 + 10000);
    EXPECT_EQ(heap.resident_bytes(), resident);
}

TEST(GlibcHeap, NeighbouringHolesMerge) {
    // Two adjacent freed chunks of 40,016 B become one hole that holds a 70,000 B request (70,016).
    GlibcHeap heap;
    const int64_t a = heap.allocate(40000), b = heap.allocate(40000);
    heap.allocate(1000);
    heap.release(a);
    heap.release(b);
    heap.allocate(70000);
    EXPECT_EQ(heap.free_bytes(), 80032 - 70016);
}

TEST(GlibcHeap, TheThresholdStopsAt32MiB) {
    // A freed 64 MiB mapping is above DEFAULT_MMAP_THRESHOLD_MAX: the threshold stays at 128 KiB.
    GlibcHeap heap;
    heap.release(heap.allocate(64 * kMiB));
    EXPECT_EQ(heap.mmap_threshold_bytes(), 128 * 1024);
}

TEST(GlibcHeap, MemalignAsksFor96BytesMoreAndFreesTheLeadAndTail) {
    // posix_memalign(64, 1,000): chunk 1,008; _int_malloc of 1,008 + 64 + 32 = 1,104 from a new top at 0. The user
    // pointer 16 is not 64-aligned: the lead up to 48 (user 64) and the tail beyond 48 + 1,008 are 48 B each,
    // held by small objects. Freed, the 1,008-byte chunk is a hole that the next same request (1,104) cannot use.
    // That one comes from the top at 1,104 (user 1,120: a 32-byte lead, a 64-byte tail). Once the pieces are freed
    // the hole, its two pieces and the second chunk's lead merge: 1,104 + 32 bytes.
    GlibcHeap heap;
    const int64_t a = heap.allocate_aligned(1000, 64);
    EXPECT_EQ(heap.in_use_bytes(), 1008);
    EXPECT_EQ(heap.pinned_bytes(), 96);
    heap.release(a);
    EXPECT_EQ(heap.free_bytes(), 1008);
    heap.allocate_aligned(1000, 64);
    EXPECT_EQ(heap.free_bytes(), 1008);
    heap.release_pieces();
    EXPECT_EQ(heap.free_bytes(), 1136);
}

TEST(GlibcHeap, PiecesNotHeldAreFreedAtOnce) {
    // The same request with pieces freed at once: the 48-byte lead is a free chunk, the tail joins the top.
    GlibcHeap heap;
    heap.hold_pieces(false);
    heap.allocate_aligned(1000, 64);
    EXPECT_EQ(heap.free_bytes(), 48);
    EXPECT_EQ(heap.pinned_bytes(), 0);
}

}  // namespace
}  // namespace ftb
