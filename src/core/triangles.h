// Two triangles of pair keys: the 64 bits cut into six blocks (block_layout(6): 11, 11, 11, 11,
// 10 and 10 bits) and a table keyed on each pair of blocks within blocks 0-2 and within blocks 3-5,
// six tables of 20-22-bit keys. Two fingerprints within 3 bits leave three of the six blocks
// clean, two of them in one triangle, so the table of that pair reaches the one from the other with
// an exact probe: six probes at any N, where rotations of three 21-22-bit blocks make 25. For a
// larger radius every table is probed within triangle_table_radius of the query's pair key. The
// layout the measurements of docs/scale.md (designs not built) point to for the dedup check;
// bench/layout_bench.cpp measures it in memory.
//
// Plain functions: no allocation, no exception.
#pragma once

namespace simhash {

constexpr int kTriangleBlocks = 6;
constexpr int kTriangleTables = 6;

struct BlockPair {
    int first, second;
};

// The blocks table t is keyed on, the first the more significant part of its key.
constexpr BlockPair kTrianglePairs[kTriangleTables] = {{0, 1}, {0, 2}, {1, 2}, {3, 4}, {3, 5}, {4, 5}};

// The least radius s such that two fingerprints within r bits (0..64) always have some pair of
// kTrianglePairs within s bits: the largest, over the ways r differing bits can fall in the six
// blocks, of the smallest pair's share. r = 3: 0; r = 7: 2; r = 10: 3.
int triangle_table_radius(int r);

}  // namespace simhash

#include "cpp_only.h"
