#include "core/batch_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/hamming.h"

namespace {

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

Pairs batch(const std::vector<uint64_t> &fps, int radius, const simhash::BitPermuter *order = nullptr) {
    std::vector<uint64_t> scratch(simhash::batch_pairs_bytes(fps.size()) / sizeof(uint64_t) + 1);
    Pairs out;
    simhash::batch_pairs(
        fps.data(), fps.size(), radius, order, scratch.data(),
        [](uint32_t i, uint32_t j, void *context) { static_cast<Pairs *>(context)->emplace_back(i, j); }, &out);
    std::sort(out.begin(), out.end());
    return out;
}

Pairs brute(const std::vector<uint64_t> &fps, int radius) {
    Pairs out;
    for (uint32_t j = 0; j < fps.size(); ++j)
        for (uint32_t i = 0; i < j; ++i)
            if (simhash::hamming_distance(fps[i], fps[j]) <= radius) out.emplace_back(i, j);
    std::sort(out.begin(), out.end());
    return out;
}

// Random fingerprints, a third of them within 1-4 bits of an earlier one, some exact duplicates.
std::vector<uint64_t> planted(size_t n, uint64_t mask, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> fps;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && rng() % 3 == 0) {
            uint64_t fp = fps[rng() % i];
            const int flips = static_cast<int>(rng() % 5);
            for (int f = 0; f < flips; ++f) fp ^= uint64_t{1} << (rng() % 64);
            fps.push_back(fp & mask);
        } else {
            fps.push_back(rng() & mask);
        }
    }
    return fps;
}

TEST(BatchPairs, EveryPairWithinTheRadiusOnceUniform) {
    const auto fps = planted(3000, ~uint64_t{0}, 1);
    for (int radius = 0; radius <= simhash::kBatchPairsMaxRadius; ++radius) {
        SCOPED_TRACE(radius);
        const Pairs expected = brute(fps, radius);
        EXPECT_FALSE(expected.empty());
        EXPECT_EQ(batch(fps, radius), expected);
    }
}

TEST(BatchPairs, SkewedBitsWithAndWithoutABitOrder) {
    // The 12 low bits constant: one block holds 16 values; a chosen bit order spreads them.
    const auto fps = planted(3000, ~uint64_t{4095}, 2);
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : fps) simhash::bit_counts_add(&counts, fp);
    const int lengths[4] = {16, 16, 16, 16};
    simhash::BitPermutation permutation;
    ASSERT_TRUE(simhash::choose_bit_permutation(counts, lengths, 4, &permutation));
    const simhash::BitPermuter order(permutation);
    std::vector<uint64_t> scratch(simhash::batch_pairs_bytes(fps.size()) / sizeof(uint64_t) + 1);
    EXPECT_LT(simhash::batch_pairs_comparisons(fps.data(), fps.size(), &order, scratch.data()),
              simhash::batch_pairs_comparisons(fps.data(), fps.size(), nullptr, scratch.data()) / 4);
    for (int radius = 0; radius <= simhash::kBatchPairsMaxRadius; ++radius) {
        SCOPED_TRACE(radius);
        const Pairs expected = brute(fps, radius);
        EXPECT_EQ(batch(fps, radius), expected);
        EXPECT_EQ(batch(fps, radius, &order), expected);
    }
}

TEST(BatchPairs, ComparisonsCountRowsSharingBlockValues) {
    // Five equal fingerprints share all four blocks: 10 pairs in each block; one distinct row adds none.
    std::vector<uint64_t> fps(5, 0x0123456789ABCDEFULL);
    fps.push_back(0xFEDCBA9876543210ULL);
    std::vector<uint64_t> scratch(simhash::batch_pairs_bytes(fps.size()) / sizeof(uint64_t) + 1);
    EXPECT_EQ(simhash::batch_pairs_comparisons(fps.data(), fps.size(), nullptr, scratch.data()), 40.0);
    EXPECT_EQ(batch(fps, 0).size(), 10u);
}

TEST(BatchPairs, NothingForTooFewRowsOrAnUnsupportedRadius) {
    EXPECT_TRUE(batch({}, 3).empty());
    EXPECT_TRUE(batch({42}, 3).empty());
    EXPECT_TRUE(batch({1, 1}, -1).empty());
    EXPECT_TRUE(batch({1, 1}, simhash::kBatchPairsMaxRadius + 1).empty());
}

}  // namespace
