#include "memory/free_chunks.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <limits>

namespace ftb {

namespace {

// A power of two; grows by doubling at half full. 4096 holds a 16-block model's free chunks (about 1,000
// starts and as many ends) without growing, at a fill that keeps probes short.
constexpr size_t kInitialSlots = 4096;

}  // namespace

AddressTable::AddressTable() : slots_(kInitialSlots, {-1, 0}), shift_(64 - std::countr_zero(kInitialSlots)) {}

int64_t AddressTable::find(int64_t key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = slot(key);; i = (i + 1) & mask) {
        if (slots_[i].first == key) return slots_[i].second;
        if (slots_[i].first < 0) return -1;
    }
}

void AddressTable::insert(int64_t key, int64_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    size_t i = slot(key);
    while (slots_[i].first >= 0) i = (i + 1) & mask;
    slots_[i] = {key, value};
    ++size_;
}

// Backward-shift deletion: later entries of the probe run move into the hole when their home slot allows.
void AddressTable::erase(int64_t key) {
    const size_t mask = slots_.size() - 1;
    size_t i = slot(key);
    while (slots_[i].first != key) i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; slots_[j].first >= 0; j = (j + 1) & mask) {
        const size_t home = slot(slots_[j].first);
        if (((j - home) & mask) >= ((j - i) & mask)) {   // j's home is at or before the hole (cyclically)
            slots_[i] = slots_[j];
            i = j;
        }
    }
    slots_[i] = {-1, 0};
    --size_;
}

void AddressTable::clear() {
    std::fill(slots_.begin(), slots_.end(), std::pair<int64_t, int64_t>{-1, 0});
    size_ = 0;
}

void AddressTable::grow() {
    std::vector<std::pair<int64_t, int64_t>> old(2 * slots_.size(), {-1, 0});
    old.swap(slots_);
    shift_ = 64 - std::countr_zero(slots_.size());
    size_ = 0;
    for (const auto& [key, value] : old)
        if (key >= 0) insert(key, value);
}

size_t SortedPairs::block_for(Pair key) const {
    return size_t(std::lower_bound(lasts_.begin(), lasts_.end(), key) - lasts_.begin());
}

void SortedPairs::insert(Pair p) {
    size_t i = block_for(p);
    if (i == blocks_.size()) {
        if (blocks_.empty()) {
            blocks_.emplace_back();
            lasts_.push_back(p);
        }
        i = blocks_.size() - 1;   // above every pair: the last block's end
    }
    std::vector<Pair>& b = blocks_[i];
    b.insert(std::lower_bound(b.begin(), b.end(), p), p);
    lasts_[i] = b.back();
    if (b.size() < 2 * kHalfBlock) return;
    std::vector<Pair> upper(b.begin() + kHalfBlock, b.end());
    b.resize(kHalfBlock);
    lasts_[i] = b.back();
    lasts_.insert(lasts_.begin() + std::ptrdiff_t(i) + 1, upper.back());
    blocks_.insert(blocks_.begin() + std::ptrdiff_t(i) + 1, std::move(upper));
}

void SortedPairs::erase(Pair p) {
    const size_t i = block_for(p);
    std::vector<Pair>& b = blocks_[i];
    b.erase(std::lower_bound(b.begin(), b.end(), p));
    if (!b.empty()) {
        lasts_[i] = b.back();
        return;
    }
    blocks_.erase(blocks_.begin() + std::ptrdiff_t(i));
    lasts_.erase(lasts_.begin() + std::ptrdiff_t(i));
}

SortedPairs::Pair SortedPairs::lower_bound(Pair key) const {
    const size_t i = block_for(key);
    if (i == blocks_.size()) return {-1, -1};
    const std::vector<Pair>& b = blocks_[i];
    return *std::lower_bound(b.begin(), b.end(), key);
}

void FreeChunks::add(int64_t address, int64_t bytes) {
    if (bytes >= kIndexedMinBytes) {
        flush_pending();
        pending_ = {bytes, address};
    }
    by_start_.insert(address, bytes);
    by_end_.insert(address + bytes, address);
    total_bytes_ += bytes;
}

void FreeChunks::remove(int64_t address, int64_t bytes) {
    if (pending_ == std::pair{bytes, address}) pending_ = {-1, -1};
    else if (bytes >= kIndexedMinBytes) by_size_.erase({bytes, address});
    by_start_.erase(address);
    by_end_.erase(address + bytes);
    total_bytes_ -= bytes;
}

std::pair<int64_t, int64_t> FreeChunks::best_small_fit(int64_t bytes) const {
    std::pair<int64_t, int64_t> best{-1, -1};
    by_start_.for_each([&](int64_t address, int64_t have) {
        if (have >= bytes && have < kIndexedMinBytes && (best.first < 0 || std::pair{have, address} < best))
            best = {have, address};
    });
    return best;
}

// Every unindexed chunk is smaller than every indexed one: a small one that holds the request is the best fit.
void FreeChunks::flush_pending() {
    if (pending_.first >= 0) by_size_.insert(pending_);
    pending_ = {-1, -1};
}

std::pair<int64_t, int64_t> FreeChunks::best_fit(int64_t bytes) {
    flush_pending();
    if (bytes < kIndexedMinBytes)
        if (const auto small = best_small_fit(bytes); small.first >= 0) return small;
    return by_size_.lower_bound({bytes, std::numeric_limits<int64_t>::min()});
}

}  // namespace ftb
