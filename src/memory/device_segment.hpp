// One stream's expandable segment of PyTorch's CUDA caching allocator, for replaying a short sequence of large
// allocations (the loss's vocabulary-sized tensors) to find how far the reservation grows beyond what is live.
//
// The rules (c10/cuda/CUDACachingAllocator.cpp): sizes are rounded up to 512 bytes (kMinBlockSize); a request
// takes the smallest free block that fits (BlockComparatorSize: best fit, lowest address among equals) and splits
// it, the allocated part at the block's start; a freed block merges with free neighbours (try_merge_blocks); when
// no free block fits, the segment maps new pages at its end (Note [Expandable Segments]: "we look for the lowest
// address at which we can fit a new allocation by adding new pages. Normally this will be at the end"), so a free
// block at the end is extended rather than left behind. What is mapped is never unmapped short of empty_cache or an
// out-of-memory retry: `extent` only grows.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace ftb {

class DeviceSegment {
public:
    // Returns a handle for release().
    int allocate(double bytes);
    void release(int handle);

    double mapped_bytes() const { return end_; }          // the segment's extent: what the stream reserves
    double live_bytes() const { return live_; }
    double peak_live_bytes() const { return peak_live_; }

private:
    struct Range {
        double start = 0, size = 0;
    };
    std::map<double, double> free_;   // start -> size, address order (neighbours merge)
    std::vector<Range> blocks_;       // by handle; size 0 once released
    double end_ = 0, live_ = 0, peak_live_ = 0;
};

}  // namespace ftb
