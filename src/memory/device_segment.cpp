#include "memory/device_segment.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace ftb {
namespace {
constexpr double kMinBlockBytes = 512;   // CUDACachingAllocator.cpp kMinBlockSize
}  // namespace

int DeviceSegment::allocate(double bytes) {
    const double size = std::ceil(bytes / kMinBlockBytes) * kMinBlockBytes;
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    double start = 0;
    if (best != free_.end()) {
        start = best->first;
        const double rest = best->second - size;
        free_.erase(best);
        if (rest > 0) free_[start + size] = rest;
    } else if (!free_.empty() && std::prev(free_.end())->first + std::prev(free_.end())->second == end_) {
        // The free block at the end grows by the pages mapped after it.
        auto last = std::prev(free_.end());
        start = last->first;
        free_.erase(last);
        end_ = start + size;
    } else {
        start = end_;
        end_ += size;
    }
    blocks_.push_back({start, size});
    live_ += size;
    peak_live_ = std::max(peak_live_, live_);
    return int(blocks_.size()) - 1;
}

void DeviceSegment::release(int handle) {
    Range& r = blocks_[size_t(handle)];
    if (r.size <= 0) return;
    live_ -= r.size;
    double start = r.start, size = r.size;
    r.size = 0;
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + size) {
        size += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            size += prev->second;
            free_.erase(prev);
        }
    }
    free_[start] = size;
}

}  // namespace ftb
