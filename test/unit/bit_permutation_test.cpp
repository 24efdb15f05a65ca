#include "core/bit_permutation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/hamming.h"

namespace {

const int kBlocks[4] = {16, 16, 16, 16};

// Distinct values of block t (16 bits from the top) of the keys of `fps`.
size_t distinct_block_values(const std::vector<uint64_t> &fps, const simhash::BitPermuter &permuter, int t) {
    std::set<uint64_t> values;
    for (uint64_t fp : fps) values.insert((permuter.key(fp) >> (48 - 16 * t)) & 0xFFFF);
    return values.size();
}

std::vector<uint64_t> random_fingerprints(size_t n, uint64_t constant_mask, uint64_t constant_value) {
    std::mt19937_64 rng(42);
    std::vector<uint64_t> fps(n);
    for (auto &fp : fps) fp = (rng() & ~constant_mask) | constant_value;
    return fps;
}

TEST(BitPermutation, UniformDataKeepsTheIdentity) {
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : random_fingerprints(20000, 0, 0)) simhash::bit_counts_add(&counts, fp);
    simhash::BitPermutation p;
    EXPECT_FALSE(simhash::choose_bit_permutation(counts, kBlocks, 4, &p));
    EXPECT_TRUE(simhash::is_identity(p));
}

TEST(BitPermutation, ConstantLowBitsAreSpreadOverTheBlocks) {
    const auto fps = random_fingerprints(50000, 0xFFF, 0x555);
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : fps) simhash::bit_counts_add(&counts, fp);
    simhash::BitPermutation p;
    ASSERT_TRUE(simhash::choose_bit_permutation(counts, kBlocks, 4, &p));
    ASSERT_TRUE(simhash::is_valid_permutation(p));
    simhash::BitPermutation identity;
    simhash::identity_permutation(&identity);
    const simhash::BitPermuter none(identity), chosen(p);
    EXPECT_EQ(distinct_block_values(fps, none, 3), 16u);  // 4 varying bits in the low block
    for (int t = 0; t < 4; ++t) {
        // Each block gets 3 of the 12 constant bits: 2^13 values, nearly all present in 50,000.
        EXPECT_GT(distinct_block_values(fps, chosen, t), 7500u) << "block " << t;
        int constant = 0;
        for (int j = 63 - 16 * t; j > 47 - 16 * t; --j) constant += p.source[j] < 12;
        EXPECT_EQ(constant, 3) << "block " << t;
        // The block's best bits on top: its directory prefix (top bits) has no constant bit.
        for (int j = 63 - 16 * t; j > 63 - 16 * t - 13; --j) EXPECT_GE(p.source[j], 12) << "block " << t;
    }
}

TEST(BitPermutation, BlockEntropyCountsTheVaryingBits) {
    const auto fps = random_fingerprints(50000, 0xFFF, 0x555);
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : fps) simhash::bit_counts_add(&counts, fp);
    simhash::BitPermutation identity, chosen;
    simhash::identity_permutation(&identity);
    ASSERT_TRUE(simhash::choose_bit_permutation(counts, kBlocks, 4, &chosen));
    double bits[4];
    simhash::block_entropy_bits(counts, identity, kBlocks, 4, bits);
    EXPECT_NEAR(bits[0], 16.0, 0.01);
    EXPECT_NEAR(bits[3], 4.0, 0.01);  // the low block: 12 constant bits
    simhash::block_entropy_bits(counts, chosen, kBlocks, 4, bits);
    for (double b : bits) EXPECT_NEAR(b, 13.0, 0.01);
}

// Biased bits (each one with probability 0.32, as SimHash bits of real text can be): a query from
// the data shares its block value with n * 2^-13.2 entries of a 16-bit block, not n * 2^-14.5.
TEST(BitPermutation, BlockEntropyIsTheCollisionEntropyOfBiasedBits) {
    simhash::BitCounts counts;
    counts.n = 100000;
    for (uint64_t &ones : counts.ones) ones = 32000;
    simhash::BitPermutation identity;
    simhash::identity_permutation(&identity);
    double bits[4];
    simhash::block_entropy_bits(counts, identity, kBlocks, 4, bits);
    for (double b : bits) EXPECT_NEAR(b, -16 * std::log2(0.32 * 0.32 + 0.68 * 0.68), 1e-9);
    EXPECT_NEAR(bits[0], 13.19, 0.01);
}

TEST(BitPermutation, RoundTripAndDistancePreserved) {
    simhash::BitPermutation p;
    std::mt19937_64 rng(7);
    simhash::identity_permutation(&p);
    for (int j = 63; j > 0; --j) std::swap(p.source[j], p.source[rng() % (j + 1)]);
    ASSERT_TRUE(simhash::is_valid_permutation(p));
    const simhash::BitPermuter permuter(p);
    for (int i = 0; i < 10000; ++i) {
        const uint64_t a = rng(), b = rng() & rng();
        EXPECT_EQ(permuter.fingerprint(permuter.key(a)), a);
        EXPECT_EQ(simhash::hamming_distance(permuter.key(a), permuter.key(b)), simhash::hamming_distance(a, b));
        for (int j = 0; j < 64; j += 9) EXPECT_EQ((permuter.key(a) >> j) & 1, (a >> p.source[j]) & 1);
    }
}

TEST(BitPermutation, InvalidPermutationsAreRecognised) {
    simhash::BitPermutation p;
    simhash::identity_permutation(&p);
    EXPECT_TRUE(simhash::is_valid_permutation(p));
    p.source[5] = 6;  // 6 twice, 5 missing
    EXPECT_FALSE(simhash::is_valid_permutation(p));
    p.source[5] = 64;
    EXPECT_FALSE(simhash::is_valid_permutation(p));
}

TEST(BitPermutation, UnequalBlocksAndAllConstantData) {
    const int blocks[3] = {22, 21, 21};
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (int i = 0; i < 1000; ++i) simhash::bit_counts_add(&counts, 0x1234);  // every bit constant
    simhash::BitPermutation p;
    simhash::choose_bit_permutation(counts, blocks, 3, &p);
    EXPECT_TRUE(simhash::is_valid_permutation(p));
}

}  // namespace
