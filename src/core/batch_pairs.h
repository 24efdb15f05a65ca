// The pairs within a small radius inside one batch of fingerprints, for the in-order decisions of a
// bulk load (simhash_insert_distinct): which earlier rows of the batch each row is near.
//
// For radius < 4 two fingerprints within `radius` bits agree exactly on at least one of four
// 16-bit blocks (pigeonhole), so the batch is counting-sorted by each block in turn (the
// fingerprints' keys in bit order `order`, chosen so that skewed bits spread over the blocks) and
// the rows of each run of equal block values are compared with each other: each pair is reported
// by the first block its two keys share. Sequential passes over the batch instead of one hash probe
// per row, whose cache misses cost more than the comparisons once the batch outgrows the cache.
// A batch whose block values are too concentrated (many equal fingerprints) would cost a quadratic
// number of comparisons: batch_pairs_comparisons tells the caller beforehand.
//
// Plain data and caller-provided memory: no allocation, no exception, so the glue may call it from
// code that may raise PostgreSQL errors (the visit callback may).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bit_permutation.h"

namespace simhash {

// The largest radius batch_pairs handles.
constexpr int kBatchPairsMaxRadius = 3;

// Bytes of scratch memory batch_pairs and batch_pairs_comparisons need for n fingerprints
// (aligned for uint32_t).
size_t batch_pairs_bytes(size_t n);

// The comparisons batch_pairs would make: the sum over the four blocks of the pairs of rows that
// share a block value.
double batch_pairs_comparisons(const uint64_t *fingerprints, size_t n, const BitPermuter *order, void *scratch);

// Calls visit(i, j, context), i < j, once for every pair of fingerprints[0 .. n-1] (n < 2^32)
// within `radius` (0..kBatchPairsMaxRadius) bits; pairs come in no particular order.
using BatchPairVisit = void (*)(uint32_t i, uint32_t j, void *context);
void batch_pairs(const uint64_t *fingerprints, size_t n, int radius, const BitPermuter *order, void *scratch,
                 BatchPairVisit visit, void *context);

}  // namespace simhash

#include "cpp_only.h"
