// Stable counting sort into buckets: the grouping the bulk load's pieces share (rows by a 16-bit
// block in core/batch_pairs and core/slot_sweep, a chunk's pairs by their later row in the SQL
// glue), each building where every bucket starts along with the sorted items.
// Plain data and caller-provided memory: no allocation, no exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace simhash {

// Sorts items 0 .. n-1 (n < 2^32) into buckets 0 .. nbuckets-1, items of a bucket in their order:
// place(i, at) puts item i at position `at`; starts (nbuckets + 1 entries) ends up holding where
// each bucket's items begin, starts[nbuckets] = n. bucket_of(i) is called twice per item.
template <typename BucketOf, typename Place>
void counting_sort(size_t n, size_t nbuckets, uint32_t *starts, BucketOf bucket_of, Place place) {
    std::memset(starts, 0, (nbuckets + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; ++i) ++starts[bucket_of(i) + 1];
    for (size_t v = 0; v < nbuckets; ++v) starts[v + 1] += starts[v];
    // starts[v] serves as bucket v's write position, then everything moves back by one bucket.
    for (size_t i = 0; i < n; ++i) place(i, starts[bucket_of(i)]++);
    for (size_t v = nbuckets; v > 0; --v) starts[v] = starts[v - 1];
    starts[0] = 0;
}

}  // namespace simhash
