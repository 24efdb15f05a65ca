// Bit votes: the byte-lane SimhashVote, the double-precision WeightedSimhashVote and a scalar
// reference must agree exactly, ties included (a tie gives a 0 bit).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/feature_hash.h"
#include "core/shingles.h"
#include "core/simhash.h"

using simhash::SimhashVote;
using simhash::WeightedSimhashVote;

namespace {

uint64_t scalar_reference(const std::vector<uint64_t> &hashes) {
    uint64_t fp = 0;
    for (int i = 0; i < 64; ++i) {
        long long vote = 0;
        for (uint64_t h : hashes) vote += ((h >> i) & 1) ? 1 : -1;
        if (vote > 0) fp |= uint64_t{1} << i;
    }
    return fp;
}

void expect_votes_agree(const std::vector<uint64_t> &hashes) {
    SimhashVote vote;
    WeightedSimhashVote weighted;
    for (uint64_t h : hashes) {
        vote.add(h);
        weighted.add(h, 1.0);
    }
    EXPECT_EQ(vote.count(), hashes.size());
    const uint64_t expected = scalar_reference(hashes);
    EXPECT_EQ(vote.fingerprint(), expected) << hashes.size() << " hashes";
    EXPECT_EQ(weighted.fingerprint(), expected) << hashes.size() << " hashes";
}

}  // namespace

TEST(SimhashVote, EqualsWeightedVoteWithUnitWeightsOnRandomHashes) {
    std::mt19937_64 rng(7);
    // Counts around the 255-feature lane flush, and even counts, where ties are frequent.
    for (size_t n : {0, 1, 2, 3, 4, 10, 254, 255, 256, 257, 510, 511, 1000, 4096, 100001}) {
        std::vector<uint64_t> hashes(n);
        for (auto &h : hashes) h = rng();
        expect_votes_agree(hashes);
    }
    // Many small even sets: ties on many bits.
    for (int trial = 0; trial < 2000; ++trial) {
        std::vector<uint64_t> hashes(2 * (1 + trial % 4));
        for (auto &h : hashes) h = rng();
        expect_votes_agree(hashes);
    }
    // Low-entropy hashes (few distinct values) so per-bit counts are far from n/2.
    for (int trial = 0; trial < 200; ++trial) {
        const uint64_t base[3] = {rng(), rng(), rng()};
        std::vector<uint64_t> hashes(1 + rng() % 2000);
        for (auto &h : hashes) h = base[rng() % 3];
        expect_votes_agree(hashes);
    }
}

TEST(SimhashVote, TiesGiveZeroBits) {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 100; ++trial) {
        const uint64_t h = rng();
        const int copies = 1 + trial * 7;  // crosses the 255 flush for larger trials
        std::vector<uint64_t> hashes;
        for (int i = 0; i < copies; ++i) {
            hashes.push_back(h);
            hashes.push_back(~h);
        }
        SimhashVote vote;
        WeightedSimhashVote weighted;
        for (uint64_t x : hashes) {
            vote.add(x);
            weighted.add(x, 1.0);
        }
        EXPECT_EQ(vote.fingerprint(), 0u);
        EXPECT_EQ(weighted.fingerprint(), 0u);
    }
    // Partial ties: h and h' differing in some bits tie exactly there; the agreeing bits win.
    const uint64_t a = 0xF0F0F0F0F0F0F0F0ull, b = 0xFF00FF00FF00FF00ull;
    SimhashVote vote;
    vote.add(a);
    vote.add(b);
    EXPECT_EQ(vote.fingerprint(), a & b);
    // All ones / all zeros.
    SimhashVote ones;
    ones.add(~uint64_t{0});
    EXPECT_EQ(ones.fingerprint(), ~uint64_t{0});
    SimhashVote zeros;
    zeros.add(0);
    EXPECT_EQ(zeros.fingerprint(), 0u);
}

TEST(WeightedSimhashVote, WeightsAndMerge) {
    // A single feature's fingerprint is the feature hash itself, whatever its positive weight.
    WeightedSimhashVote one;
    one.add(0x0123456789ABCDEFull, 0.25);
    EXPECT_EQ(one.fingerprint(), 0x0123456789ABCDEFull);
    // A heavier feature outvotes two light ones.
    WeightedSimhashVote w;
    w.add(0xAAAAAAAAAAAAAAAAull, 3.0);
    w.add(0x5555555555555555ull, 1.0);
    w.add(0x5555555555555555ull, 1.0);
    EXPECT_EQ(w.fingerprint(), 0xAAAAAAAAAAAAAAAAull);
    // Merging votes equals adding everything to one accumulator.
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> weight(0.1, 5.0);
    WeightedSimhashVote left, right, all;
    for (int i = 0; i < 500; ++i) {
        const uint64_t h = rng();
        const double x = weight(rng);
        (i % 2 ? left : right).add(h, x);
        all.add(h, x);
    }
    left.merge(right);
    double merged[WeightedSimhashVote::kStateDoubles], single[WeightedSimhashVote::kStateDoubles];
    left.save(merged);
    all.save(single);
    for (int i = 0; i < WeightedSimhashVote::kStateDoubles; ++i) EXPECT_NEAR(merged[i], single[i], 1e-9);
    WeightedSimhashVote loaded;
    loaded.load(merged);
    EXPECT_EQ(loaded.fingerprint(), left.fingerprint());
    EXPECT_EQ(left.fingerprint(), all.fingerprint());
    // Uniform weight 2 gives the unweighted fingerprint.
    std::vector<uint64_t> hashes(301);
    for (auto &h : hashes) h = rng();
    SimhashVote unit;
    WeightedSimhashVote doubled;
    for (uint64_t h : hashes) {
        unit.add(h);
        doubled.add(h, 2.0);
    }
    EXPECT_EQ(doubled.fingerprint(), unit.fingerprint());
}

TEST(WeightedSimhashVote, TiesUpToRoundingAreZeroWhateverTheOrder) {
    // ln 3 + ln(200 / 3) = ln 200 in the reals; in doubles the sum depends on the order. Bit 0
    // gets +ln 3 +ln(200/3) -ln 200 (a tie), bit 1 a clear positive vote, bit 2 a negative one.
    const double a = std::log(3.0), b = std::log(200.0 / 3.0), c = std::log(200.0);
    const uint64_t ha = 0b011, hb = 0b011, hc = 0b010;
    const uint64_t order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const uint64_t hashes[3] = {ha, hb, hc};
    const double weights[3] = {a, b, c};
    for (const auto &o : order) {
        WeightedSimhashVote vote;
        for (int i = 0; i < 3; ++i) vote.add(hashes[o[i]], weights[o[i]]);
        EXPECT_EQ(vote.fingerprint(), 0b010u);
    }
}

TEST(WeightedSimhashVote, OverflowIsDetected) {
    // Finite weights whose sum exceeds double precision: the vote is no longer finite, and stays
    // so (an infinity plus a finite number, or NaN from opposite infinities).
    WeightedSimhashVote large;
    large.add(0x00000000FFFFFFFFull, 1e308);
    EXPECT_TRUE(large.finite());
    large.add(0x00000000FFFFFFFFull, 1e308);
    EXPECT_FALSE(large.finite());
    large.add(0x00000000FFFFFFFFull, -1e308);
    EXPECT_FALSE(large.finite());
    // Merging two finite votes (the aggregate's combine function) can overflow as well.
    WeightedSimhashVote left, right, opposite;
    left.add(0x1234, 1.5e308);
    right.add(0x1234, 1.5e308);
    opposite.add(0x1234, -1.5e308);
    left.merge(opposite);
    EXPECT_TRUE(left.finite());
    left.merge(right);
    EXPECT_TRUE(left.finite());
    left.merge(right);
    EXPECT_FALSE(left.finite());
    EXPECT_TRUE(WeightedSimhashVote().finite());
}

TEST(SimhashText, IsTheVoteOfTheShingleHashes) {
    const std::string text =
        "The quick brown fox jumps over the lazy dog; \xE4\xB8\xAD\xE6\x96\x87\xE5\x88\x86\xE8\xAF\x8D 2024!";
    for (auto unit : {simhash::ShingleUnit::kWord, simhash::ShingleUnit::kChar}) {
        for (int size : {1, 2, 3, 5}) {
            const simhash::ShingleOptions options{unit, size};
            SimhashVote vote;
            for (const auto &s : simhash::shingles(text.data(), text.size(), options))
                vote.add(simhash::feature_hash(s.data(), s.size()));
            EXPECT_EQ(simhash::simhash_text(text.data(), text.size(), options), vote.fingerprint());
        }
    }
    // One shingle: the fingerprint is its XXH3 hash.
    EXPECT_EQ(simhash::simhash_text("Hello", 5), simhash::feature_hash("hello", 5));
}
