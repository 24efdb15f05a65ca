// Bit permutations that spread a data set's low-entropy bits over the blocks of a permuted-table
// index. The pigeonhole search (a fingerprint within r bits of the query agrees with it on some
// block up to floor(r / m) bits) is exact for any fixed reordering of the 64 bits, because a
// permutation preserves Hamming distance; what it changes is how many fingerprints share a block
// value. Fingerprints whose low 12 bits never change put only 16 distinct values in a 16-bit low
// block; moved three to a block, the constant bits cost each block 3 bits instead of one block 12.
// This follows the data-dependent bit grouping of GPH (Qin et al., ICDE 2018) with per-bit
// entropies: bits are dealt, best first, to the block whose entropy is lowest so far.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simhash {

// Bit j of a key (0 = least significant) is bit source[j] of the fingerprint.
struct BitPermutation {
    uint8_t source[64];
};

void identity_permutation(BitPermutation *out);
bool is_identity(const BitPermutation &p);
// Whether `p` is a permutation of 0..63 (as read back from storage).
bool is_valid_permutation(const BitPermutation &p);

// Counts of one bits per position over a sample of fingerprints.
struct BitCounts {
    uint64_t ones[64];
    uint64_t n;
};
void bit_counts_clear(BitCounts *counts);
void bit_counts_add(BitCounts *counts, uint64_t fingerprint);

// Chooses the key layout for blocks of the given lengths (block 0 the most significant bits of
// the key, as the index cuts it). Returns false, with the identity in *out, when every block
// already carries at least `min_block_entropy` of its length in bits of entropy (uniform data:
// nothing to gain, and the identity costs nothing to apply).
bool choose_bit_permutation(const BitCounts &counts, const int *block_lengths, int nblocks, BitPermutation *out,
                            double min_block_entropy = 0.9);

// Bits of collision entropy (from `counts`, bits taken as independent) in each block of the key
// layout `p` (blocks as above), at most the block's length: log2 of n over the entries a query
// drawn from the data finds sharing its block value (the block's length for uniform bits, 0 for
// constant ones).
void block_entropy_bits(const BitCounts &counts, const BitPermutation &p, const int *block_lengths, int nblocks,
                        double *bits);

// Applies a permutation (or its inverse) with eight table lookups.
class BitPermuter {
public:
    explicit BitPermuter(const BitPermutation &p);
    uint64_t key(uint64_t fingerprint) const { return apply(forward_, fingerprint); }
    uint64_t fingerprint(uint64_t key) const { return apply(inverse_, key); }

private:
    static uint64_t apply(const uint64_t (&table)[8][256], uint64_t x) {
        uint64_t y = 0;
        for (int b = 0; b < 8; ++b) y |= table[b][(x >> (8 * b)) & 0xFF];
        return y;
    }
    uint64_t forward_[8][256];
    uint64_t inverse_[8][256];
};

}  // namespace simhash
