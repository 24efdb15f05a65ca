// In-place most-significant-digit radix sort (American flag sort) by the top bits of a 64-bit key:
// the sort a run's tables are written from. It needs no second array, so a build holds a run's
// entries in memory at 16 bytes each instead of 36 (the entries, a sorted copy, one table's
// refs), and its passes are linear: the first moves every item once among 2,048 buckets (2,048
// write positions, which the caches and the TLB hold, where one scatter to the 2^21 slots of a
// large run's directory missed on every item), the next ones sort buckets that fit in the caches.
//
// Items whose top bits are equal keep no particular order (the sort is not stable).
// Plain data, no allocation; recursion depth at most ceil(bits / 11). A caller's StopPoll is
// ticked an item at a time (its callback asked every 2^18 items, a few milliseconds): when it
// asks to stop, Stopped is thrown and the items are left in some order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/stop_poll.h"

namespace simhash {

constexpr int kRadixDigitBits = 11;
// Below this many items, insertion sort: the counts of a pass would cost more than the moves.
constexpr size_t kRadixSmallSort = 48;
// Items ahead of a bucket's head whose line a swap asks for (a few lines of 8-16-byte items).
constexpr size_t kRadixPrefetchItems = 16;

namespace radix_detail {

template <typename T, typename KeyOf>
void insertion_sort(T *items, size_t n, int bits, KeyOf key_of) {
    const int drop = 64 - bits;
    for (size_t i = 1; i < n; ++i) {
        T item = std::move(items[i]);
        const uint64_t top = key_of(item) >> drop;
        size_t j = i;
        for (; j > 0 && (key_of(items[j - 1]) >> drop) > top; --j) items[j] = std::move(items[j - 1]);
        items[j] = std::move(item);
    }
}

// Items counted or moved between two ticks of the caller's poll.
constexpr size_t kRadixTickItems = size_t{1} << 16;

// Sorts items by key bits [64 - bits, 64 - sorted) counted from the low end, the bits above them
// being equal among the items.
template <typename T, typename KeyOf>
void sort_level(T *items, size_t n, int sorted, int bits, KeyOf key_of, StopPoll *poll) {
    if (n < 2 || sorted >= bits) return;
    if (n <= kRadixSmallSort) {
        insertion_sort(items, n, bits, key_of);
        tick(poll, n);
        return;
    }
    const int digit_bits = std::min(kRadixDigitBits, bits - sorted);
    const int shift = 64 - sorted - digit_bits;
    const size_t nbuckets = size_t{1} << digit_bits;
    const uint64_t mask = nbuckets - 1;
    auto digit_of = [&](const T &item) { return static_cast<size_t>((key_of(item) >> shift) & mask); };

    size_t head[size_t{1} << kRadixDigitBits];
    size_t end[size_t{1} << kRadixDigitBits];
    std::fill(end, end + nbuckets, 0);
    for (size_t i = 0; i < n; ++i) {
        ++end[digit_of(items[i])];
        if ((i + 1) % kRadixTickItems == 0) tick(poll, kRadixTickItems);
    }
    size_t at = 0;
    for (size_t b = 0; b < nbuckets; ++b) {
        head[b] = at;
        at += end[b];
        end[b] = at;
    }
    // Each bucket in turn is filled from its head: an item that belongs elsewhere is swapped to its
    // bucket's head until the item in hand belongs here.
    // Filling the first bucket places most items (each cycle of swaps ends only at an item of that
    // bucket): the poll is ticked by swaps made, not by buckets filled.
    size_t moved = 0;
    for (size_t b = 0; b < nbuckets; ++b) {
        while (head[b] < end[b]) {
            T item = std::move(items[head[b]]);
            size_t d = digit_of(item);
            while (d != b) {
                // A bucket's head moves forward through memory: its next lines are asked for
                // before the swaps reach them (2,048 heads are more streams than the hardware
                // prefetcher follows, and each swap waits for the item it takes).
                if (head[d] + kRadixPrefetchItems < end[d]) __builtin_prefetch(&items[head[d] + kRadixPrefetchItems]);
                std::swap(item, items[head[d]++]);
                d = digit_of(item);
                if (++moved == kRadixTickItems) {
                    tick(poll, moved);
                    moved = 0;
                }
            }
            items[head[b]++] = std::move(item);
        }
    }
    tick(poll, moved);
    size_t begin = 0;
    for (size_t b = 0; b < nbuckets; ++b) {
        sort_level(items + begin, end[b] - begin, sorted + digit_bits, bits, key_of, poll);
        begin = end[b];
    }
}

}  // namespace radix_detail

// Sorts items[0 .. n) by the top `bits` bits (1..64) of key_of(item), a uint64_t. `poll` (may be
// null) can stop it, see above.
template <typename T, typename KeyOf>
void radix_sort_top_bits(T *items, size_t n, int bits, KeyOf key_of, StopPoll *poll = nullptr) {
    radix_detail::sort_level(items, n, 0, bits, key_of, poll);
}

}  // namespace simhash
