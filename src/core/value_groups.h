// A batch of centers grouped by the value of one block, for a bulk load's check against a run of
// wide blocks (three tables of 21-22 bits from 2^27 entries on): probing costs a chain of cache
// misses per (center, block value), and at radius 3 a center probes 23 values of table 0, so a
// million centers probe 23 million values spread over a table of 4 million, each page of the table
// reached again and again in random order. Grouped by block value, the centers let the table be
// read once, slot by slot in order: each block value's entries are compared with the centers whose
// block lies within the probing radius (0 or 1) of that value, gathered here.
//
// Plain data and caller-provided memory: no allocation, no exception.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simhash {

// The widest block a grouping takes (2^22 values: 16 MB of group starts) and the largest per-block
// radius it gathers for (a ball of 1 + bits values; wider balls make the gathering, not the
// reading, the cost).
constexpr int kValueGroupMaxBits = 22;
constexpr int kValueGroupMaxRadius = 1;

// The centers in the order of their block values: rank k is center members[k] (a position 0 .. n-1
// in the order they were given), and the ranks of value v are first[v] .. first[v + 1] - 1. A
// caller lays out what it compares by rank, so that a value's centers lie together.
struct ValueGroups {
    int bits;
    uint32_t *first;    // (1 << bits) + 1
    uint32_t *members;  // n
    size_t n;
};

// Bytes value_groups_build needs for n centers of `bits`-bit blocks (aligned for uint32_t).
size_t value_groups_bytes(int bits, size_t n);

// Groups n centers (n < 2^32) by their block values blocks[0 .. n-1] (each below 2^bits; bits
// 1 .. kValueGroupMaxBits).
void value_groups_build(ValueGroups *groups, void *memory, int bits, const uint32_t *blocks, size_t n);

// Writes the ranks of the centers whose block lies within `radius` (0 or 1) bits of `value` to
// `out` (room for n), the value's own centers first; returns how many. Each center once.
size_t value_groups_gather(const ValueGroups *groups, uint32_t value, int radius, uint32_t *out);

// Sets bit (u >> shift) of `bitmap` (2^(bits - shift) bits, cleared by the caller) for every value
// u within `radius` (0 or 1) of some center's block: the slots, of a directory on the top
// bits - shift bits of the block, that a sweep has to read.
void value_groups_mark(const ValueGroups *groups, int radius, int shift, uint64_t *bitmap);

}  // namespace simhash

#include "cpp_only.h"
