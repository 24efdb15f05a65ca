// The one block layout of the project: the 64 bits of a fingerprint cut into `count` contiguous
// blocks, block 0 the most significant, each 64 / count bits and the first 64 % count one bit
// longer. Two fingerprints within r bits agree exactly on at least count - r blocks (pigeonhole),
// and on some block up to floor(r / count) bits (block_probe_radius refines it); every user of
// that argument cuts the bits here: the index's permuted tables (src/am, on each run's keys), the
// in-memory buckets of its pending list and small runs, the batch join's tables (near_pairs, which
// numbers the same blocks from the least significant end) and the neighbourhood locks of dedup on
// load.
#pragma once

#include <cmath>
#include <cstdint>

namespace simhash {

struct BlockLayout {
    int count;      // 1..64
    int width[64];  // bits in block i
    int shift[64];  // bits above block i
};

// Bits in block i of `count`.
constexpr int block_width(int count, int i) { return 64 / count + (i < 64 % count ? 1 : 0); }

constexpr BlockLayout block_layout(int count) {
    BlockLayout layout{};
    layout.count = count;
    int shift = 0;
    for (int i = 0; i < count; ++i) {
        layout.width[i] = block_width(count, i);
        layout.shift[i] = shift;
        shift += layout.width[i];
    }
    return layout;
}

// How many blocks a set of `entries` fingerprints is cut into when the index chooses: blocks of
// about log2(entries) - 5 bits, rounded to a count from 4 to 8, and 3 blocks (21-22 bits) from
// 2^27 (134M) entries on. Multi-index hashing's analysis (Norouzi, Punjani and Fleet) asks for
// blocks of about log2(N) bits, where a probe finds about one entry; here a probe (a directory
// slot and a page) costs as much as filtering a few dozen candidates with the popcount kernels, so
// shorter blocks that find ~30 entries a probe win. Measured on one core, uniform fingerprints,
// radius 5-12: 20,000 entries fastest with 7-8 blocks, 100,000 with 6, 300,000 with 5 (2.2x faster
// than 4 at radius 12), 1M to 30M with 4 at every radius 0-12; at 100M (index in shared buffers)
// 4 blocks were faster at radius 0-7 (0.025 against 0.043 ms at 3, 0.30 against 0.48 at 7) and 3
// at 8-12 (2.6 against 3.6 ms at 10); at 300M, 3 blocks (30 bytes a row against 38, the index
// larger than shared buffers) were faster at every radius (0.095 against 0.112 ms at 3, 1.3
// against 7.7 at 7, 9.3 against 23 at 10). Fewer blocks than 4 need directories wider than 16
// bits, which runs have had since on-disk format 5.
constexpr uint64_t kThreeBlocksFrom = uint64_t{1} << 27;
inline int auto_block_count(uint64_t entries) {
    if (entries >= kThreeBlocksFrom) return 3;
    const double bits = std::log2(static_cast<double>(entries > 1 ? entries : 1)) - 5.0;
    if (bits <= 8.0) return 8;
    const int count = static_cast<int>(std::lround(64.0 / bits));
    return count < 4 ? 4 : count > 8 ? 8 : count;
}

// Block i of `key` (a fingerprint, or its bits in a run's order), right-aligned.
inline uint64_t block_value(uint64_t key, const BlockLayout &layout, int i) {
    return layout.width[i] >= 64 ? key : (key << layout.shift[i]) >> (64 - layout.width[i]);
}

// The lowest bit of block i, counting from the least significant bit.
constexpr int block_low_bit(const BlockLayout &layout, int i) { return 64 - layout.shift[i] - layout.width[i]; }

// How far from the query's block i a probe of radius `radius` must look, by the refined pigeonhole
// of multi-index hashing (Norouzi, Punjani and Fleet, Proposition 1): with radius = count * q + a,
// 0 <= a < count, two fingerprints within the radius have one of the first a + 1 blocks within q
// bits or one of the others within q - 1 bits (otherwise they would differ in at least
// (a + 1)(q + 1) + (count - a - 1) q = radius + 1 bits). -1: block i need not be probed at all
// (radius < count - 1: count - radius - 1 exact blocks are enough). Against q in every block this
// makes count / (a + 1) times fewer probes where q - 1 makes far fewer values than q, e.g. at radius
// 12 with 4 blocks of 16 bits: 697 + 3 x 137 = 1,108 probes instead of 2,788.
constexpr int block_probe_radius(int radius, int count, int i) { return radius / count - (i > radius % count ? 1 : 0); }

// Calls visit(v) once for every `len`-bit value v within `budget` bit flips of `value` (flipping
// only bits >= `from`): the block values a pigeonhole probe of radius `budget` looks up.
template <typename Visit>
void for_each_value_within(uint32_t value, int len, int budget, Visit &&visit, int from = 0) {
    visit(value);
    if (budget <= 0) return;
    for (int bit = from; bit < len; ++bit) for_each_value_within(value ^ (uint32_t{1} << bit), len, budget - 1, visit, bit + 1);
}

}  // namespace simhash
