// An in-memory multi-index hash over a growing array of fingerprints, for the index's pending list
// (the unsorted entries not yet written out as a sorted run). Scanning that list costs one POPCNT
// per entry and query; with these buckets a query at a small radius touches a few dozen entries.
//
// The 64 bits are cut into four 16-bit blocks (the pigeonhole split of the sorted runs' default
// geometry): a fingerprint within r bits of the query has some block within block_probe_radius(r,
// 4, block) bits of the query's block (blocks.h). Per block, a bucket array of chain heads and one `next` link per entry; a
// block value's bucket is a multiplicative hash of it, so constant or skewed bits do not pile every
// entry into one chain unless the whole block is constant. Entries are only ever appended (the
// pending list grows by appends; anything else rebuilds it from scratch). For a copy of a sorted
// run the blocks are cut from the run's own bit order (`order`, see bit_permutation.h), so a run
// whose low bits are constant does not get one table of a few huge chains.
//
// A sorted run's copy never grows: block_buckets_freeze sorts it per table instead (a directory on
// the block's top bucket_bits bits, then per entry its 32 key bits below that prefix and its
// position), so a probe reads one contiguous range and fetches a fingerprint only when those 32
// bits are close enough. Chains cost two dependent cache misses per entry walked, which at radius 3
// over a 300,000-entry copy (about five entries per block value and table) was most of the search.
//
// Plain data and caller-provided memory: no allocation, no exception, so the index AM can keep the
// structure in a PostgreSQL memory context and call it from code that may raise PostgreSQL errors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bit_permutation.h"

namespace simhash {

constexpr int kBucketBlocks = 4;
constexpr int kBucketBlockBits = 16;

struct BlockBuckets {
    int bucket_bits;         // log2 of the buckets per block (and of a frozen table's directory)
    size_t capacity;         // entries the links have room for
    size_t n;                // entries linked or frozen (fingerprints[0 .. n-1])
    uint32_t *heads;         // kBucketBlocks << bucket_bits chain heads (UINT32_MAX: empty)
    uint32_t *next;          // kBucketBlocks * capacity links
    const BitPermuter *order;  // the bit order blocks are cut from; null: the fingerprints' own
    // Frozen (block_buckets_freeze): per table, (1 << bucket_bits) + 1 directory offsets, then
    // n keys and n positions in directory order. No chains.
    bool frozen;
    uint32_t *offsets;
    uint32_t *keys;
    uint32_t *positions;
};

// Bytes of memory block_buckets_init needs for `capacity` entries and 2^bucket_bits buckets.
size_t block_buckets_bytes(int bucket_bits, size_t capacity);

// The bucket count worth having for `entries` entries: about one entry per bucket, 2^8 .. 2^16.
int block_buckets_bits_for(size_t entries);

// Empties `b` and lays it out in `memory` (block_buckets_bytes(bucket_bits, capacity) bytes,
// aligned for uint32_t), blocks cut in bit order `order` (null: the fingerprints' own; it must
// outlive `b`). capacity < 2^32 - 1.
void block_buckets_init(BlockBuckets *b, void *memory, int bucket_bits, size_t capacity,
                        const BitPermuter *order = nullptr);

// Links fingerprints[b->n .. n-1] (n <= capacity; earlier ones are linked already).
void block_buckets_link(BlockBuckets *b, const uint64_t *fingerprints, size_t n);

// Bytes of memory block_buckets_freeze needs for n entries and 2^bucket_bits directory slots.
size_t block_buckets_frozen_bytes(int bucket_bits, size_t n);

// Lays out fingerprints[0 .. n-1] (n < 2^32 - 1) in `memory` (block_buckets_frozen_bytes, aligned
// for uint32_t) as sorted tables, blocks cut in bit order `order` (null: the fingerprints' own; it
// must outlive `b`); bucket_bits 1..16. Nothing can be linked to a frozen `b`.
void block_buckets_freeze(BlockBuckets *b, void *memory, int bucket_bits, const uint64_t *fingerprints, size_t n,
                          const BitPermuter *order = nullptr);

// Asks for the cache lines a search at a radius below 4 starts from (one directory or bucket line
// per table), so that a caller can do other work while they arrive. No effect otherwise.
void block_buckets_prefetch(const BlockBuckets *b, uint64_t query, int radius);

// The second step of block_buckets_prefetch, once the lines it asked for have arrived: asks for the
// first lines of the entries those lines point at (a frozen table's key range, a chain's first
// fingerprint and link). No effect at a radius of 4 or more.
void block_buckets_prefetch_entries(const BlockBuckets *b, const uint64_t *fingerprints, uint64_t query, int radius);

// Calls visit(index, context) once for every linked fingerprint within `radius` bits of `query`
// (radius >= 0; at most 64 counts), in no particular order. Probes the buckets where they are
// cheaper than a scan of all n fingerprints, else scans. Returns how many it visited.
using BucketVisit = void (*)(uint32_t index, void *context);
size_t block_buckets_search(const BlockBuckets *b, const uint64_t *fingerprints, uint64_t query, int radius,
                            BucketVisit visit, void *context);

}  // namespace simhash

#include "cpp_only.h"
