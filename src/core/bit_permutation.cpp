#include "core/bit_permutation.h"

#include <algorithm>
#include <cmath>

namespace simhash {

namespace {

double bit_entropy(uint64_t ones, uint64_t n) {
    if (n == 0 || ones == 0 || ones == n) return 0.0;
    const double p = static_cast<double>(ones) / static_cast<double>(n);
    return -(p * std::log2(p) + (1 - p) * std::log2(1 - p));
}

// The collision entropy (Renyi order 2) of one bit: -log2 of the chance that two fingerprints
// drawn from the data agree on it. A query drawn from the data lands in a block value shared by
// n * 2^-sum of these entries on average, more than the Shannon entropy says where bits are
// biased (p = 0.32: 0.82 bits instead of 0.90), which is what a probe reads.
double bit_collision_entropy(uint64_t ones, uint64_t n) {
    if (n == 0 || ones == 0 || ones == n) return 0.0;
    const double p = static_cast<double>(ones) / static_cast<double>(n);
    return -std::log2(p * p + (1 - p) * (1 - p));
}

// table[b][v]: the image of byte value v at byte b under `move` (bit i goes to bit move[i]).
void fill_table(const uint8_t (&move)[64], uint64_t (&table)[8][256]) {
    for (int b = 0; b < 8; ++b)
        for (int v = 0; v < 256; ++v) {
            uint64_t y = 0;
            for (int i = 0; i < 8; ++i)
                if (v & (1 << i)) y |= uint64_t{1} << move[8 * b + i];
            table[b][v] = y;
        }
}

}  // namespace

void identity_permutation(BitPermutation *out) {
    for (int j = 0; j < 64; ++j) out->source[j] = static_cast<uint8_t>(j);
}

bool is_identity(const BitPermutation &p) {
    for (int j = 0; j < 64; ++j)
        if (p.source[j] != j) return false;
    return true;
}

bool is_valid_permutation(const BitPermutation &p) {
    uint64_t seen = 0;
    for (int j = 0; j < 64; ++j) {
        if (p.source[j] >= 64) return false;
        seen |= uint64_t{1} << p.source[j];
    }
    return seen == ~uint64_t{0};
}

void bit_counts_clear(BitCounts *counts) {
    std::fill(counts->ones, counts->ones + 64, 0);
    counts->n = 0;
}

void bit_counts_add(BitCounts *counts, uint64_t fingerprint) {
    for (int i = 0; i < 64; ++i) counts->ones[i] += (fingerprint >> i) & 1;
    counts->n++;
}

bool choose_bit_permutation(const BitCounts &counts, const int *block_lengths, int nblocks, BitPermutation *out,
                            double min_block_entropy) {
    identity_permutation(out);
    double entropy[64];
    for (int i = 0; i < 64; ++i) entropy[i] = bit_entropy(counts.ones[i], counts.n);
    // Blocks as the index cuts them: block 0 holds the top block_lengths[0] key bits, and so on.
    int top[64];  // the most significant key bit of each block
    int position = 64;
    bool balanced = true;
    for (int t = 0; t < nblocks; ++t) {
        top[t] = position - 1;
        double sum = 0;
        for (int j = position - block_lengths[t]; j < position; ++j) sum += entropy[j];
        if (sum < min_block_entropy * block_lengths[t]) balanced = false;
        position -= block_lengths[t];
    }
    if (balanced || counts.n == 0) return false;

    // Bits by entropy, best first (ties by position, so the choice is deterministic); each goes to
    // the block with the least entropy so far that has room, at its highest free position, so a
    // block's best bits are its top bits (the directory prefix).
    int order[64];
    for (int i = 0; i < 64; ++i) order[i] = i;
    std::stable_sort(order, order + 64, [&](int a, int b) { return entropy[a] > entropy[b]; });
    double block_sum[64] = {};
    int filled[64] = {};
    for (int k = 0; k < 64; ++k) {
        int best = -1;
        for (int t = 0; t < nblocks; ++t) {
            if (filled[t] == block_lengths[t]) continue;
            // Compare entropy per bit of room left: a short block fills as fast as a long one.
            if (best < 0 || block_sum[t] * block_lengths[best] < block_sum[best] * block_lengths[t]) best = t;
        }
        out->source[top[best] - filled[best]] = static_cast<uint8_t>(order[k]);
        filled[best]++;
        block_sum[best] += entropy[order[k]];
    }
    return !is_identity(*out);
}

void block_entropy_bits(const BitCounts &counts, const BitPermutation &p, const int *block_lengths, int nblocks,
                        double *bits) {
    int position = 64;
    for (int t = 0; t < nblocks; ++t) {
        double sum = 0;
        for (int j = position - block_lengths[t]; j < position; ++j)
            sum += bit_collision_entropy(counts.ones[p.source[j]], counts.n);
        bits[t] = counts.n == 0 ? block_lengths[t] : std::min(sum, static_cast<double>(block_lengths[t]));
        position -= block_lengths[t];
    }
}

BitPermuter::BitPermuter(const BitPermutation &p) {
    uint8_t forward_move[64], inverse_move[64];
    for (int j = 0; j < 64; ++j) {
        forward_move[p.source[j]] = static_cast<uint8_t>(j);  // fingerprint bit source[j] -> key bit j
        inverse_move[j] = p.source[j];                        // key bit j -> fingerprint bit source[j]
    }
    fill_table(forward_move, forward_);
    fill_table(inverse_move, inverse_);
}

}  // namespace simhash
