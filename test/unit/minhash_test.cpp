// MinHash: exact 2-universal arithmetic, signatures, merging and the accuracy of the estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/minhash.h"

using simhash::kMersenne61;
using simhash::MinhashFamily;
using simhash::MinhashSketch;
using simhash::universal_hash_reference;

namespace {

// The parameter derivation documented in minhash.h, written out independently.
uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Scalar reference signature: per slot, the minimum of h_i over the low 32 bits of the feature
// hashes, computed with 128-bit arithmetic, then its top 32 bits (bits 29..60).
std::vector<uint32_t> reference_signature(const MinhashFamily &family, const std::vector<uint64_t> &features) {
    std::vector<uint32_t> sig(family.slots());
    for (int i = 0; i < family.slots(); ++i) {
        uint64_t m = kMersenne61;
        for (uint64_t f : features)
            m = std::min(m, universal_hash_reference(family.a(i), family.b(i), static_cast<uint32_t>(f)));
        sig[i] = static_cast<uint32_t>(m >> 29);
    }
    return sig;
}

std::vector<uint32_t> signature(const MinhashFamily &family, const std::vector<uint64_t> &features) {
    MinhashSketch sketch(family);
    for (uint64_t f : features) sketch.add(f);
    return sketch.signature();
}

// A mirror of the lane arithmetic of update_slots (a split into 32 + 29 bits, folding mod 2^61-1),
// so the reduction can be checked on extreme a and b that a seeded family never hands out.
uint64_t lane_formula(uint64_t a, uint64_t b, uint32_t x) {
    const uint64_t p = kMersenne61, low29 = (uint64_t{1} << 29) - 1;
    const uint64_t lo = (a & 0xFFFFFFFFull) * x, hi = (a >> 32) * x;
    uint64_t s = (hi >> 29) + ((hi & low29) << 32) + (lo & p) + (lo >> 61) + b;
    s = (s & p) + (s >> 61);
    return s >= p ? s - p : s;
}

// Two sets of random feature hashes with common features in both and only_a, only_b in one
// each. MinHash reads the low 32 bits of a feature hash: those are kept distinct, so the Jaccard
// similarity of the 64-bit sets is exactly the one MinHash sees.
void overlapping_sets(std::mt19937_64 &rng, size_t common, size_t only_a, size_t only_b,
                      std::vector<uint64_t> &a, std::vector<uint64_t> &b) {
    std::unordered_set<uint32_t> seen;
    auto fresh = [&]() {
        uint64_t f;
        do f = rng();
        while (!seen.insert(static_cast<uint32_t>(f)).second);
        return f;
    };
    for (size_t i = 0; i < common; ++i) {
        const uint64_t f = fresh();
        a.push_back(f);
        b.push_back(f);
    }
    for (size_t i = 0; i < only_a; ++i) a.push_back(fresh());
    for (size_t i = 0; i < only_b; ++i) b.push_back(fresh());
}

}  // namespace

TEST(MinhashFamily, ParametersFollowTheDocumentedDerivation) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
        MinhashFamily family(256, seed);
        uint64_t state = seed;
        for (int i = 0; i < family.slots(); ++i) {
            const uint64_t a = 1 + splitmix64(state) % (kMersenne61 - 1);
            const uint64_t b = splitmix64(state) % kMersenne61;
            ASSERT_EQ(family.a(i), a) << "seed " << seed << " slot " << i;
            ASSERT_EQ(family.b(i), b) << "seed " << seed << " slot " << i;
            ASSERT_GE(family.a(i), 1u);
            ASSERT_LT(family.a(i), kMersenne61);
            ASSERT_LT(family.b(i), kMersenne61);
        }
    }
}

TEST(MinhashFamily, FastUpdateEqualsReferenceHash) {
    std::mt19937_64 rng(2024);
    std::vector<uint32_t> xs = {0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
    for (int i = 0; i < 200; ++i) xs.push_back(static_cast<uint32_t>(rng()));
    // Many families: thousands of random (a, b) pairs, every slot count remainder of the vector
    // loops (1..17 slots, and 8192).
    std::vector<int> slot_counts;
    for (int s = 1; s <= 17; ++s) slot_counts.push_back(s);
    slot_counts.push_back(128);
    slot_counts.push_back(8192);
    for (int slots : slot_counts) {
        MinhashFamily family(slots, rng());
        std::vector<uint64_t> mins(slots);
        for (uint32_t x : xs) {
            std::fill(mins.begin(), mins.end(), MinhashFamily::initial_minimum());
            family.update(x, mins.data());
            for (int i = 0; i < slots; ++i)
                ASSERT_EQ(mins[i], universal_hash_reference(family.a(i), family.b(i), x))
                    << "slots " << slots << " slot " << i << " x " << x;
        }
    }
}

TEST(MinhashFamily, LaneArithmeticIsExactForRandomAndExtremeParameters) {
    std::mt19937_64 rng(99);
    const uint64_t p = kMersenne61;
    const uint64_t extremes_a[] = {1, 2, 0xFFFFFFFFull, 0x100000000ull, p - 2, p - 1, (p >> 1) + 1};
    const uint64_t extremes_b[] = {0, 1, p - 2, p - 1};
    const uint32_t extremes_x[] = {0u, 1u, 0x80000000u, 0xFFFFFFFFu};
    for (uint64_t a : extremes_a)
        for (uint64_t b : extremes_b)
            for (uint32_t x : extremes_x) ASSERT_EQ(lane_formula(a, b, x), universal_hash_reference(a, b, x));
    for (int i = 0; i < 1000000; ++i) {
        const uint64_t a = 1 + rng() % (p - 1), b = rng() % p;
        const uint32_t x = static_cast<uint32_t>(rng());
        ASSERT_EQ(lane_formula(a, b, x), universal_hash_reference(a, b, x)) << a << " " << b << " " << x;
    }
    // The reference itself: (a x + b) mod p, spot-checked by hand.
    EXPECT_EQ(universal_hash_reference(p - 1, 0, 2), p - 2);  // -2 mod p
    EXPECT_EQ(universal_hash_reference(p - 1, p - 1, 1), p - 2);
    EXPECT_EQ(universal_hash_reference(1, 5, 0), 5u);
}

TEST(MinhashSketch, SignatureEqualsScalarReference) {
    std::mt19937_64 rng(5);
    for (int slots : {1, 7, 128, 200}) {
        for (int trial = 0; trial < 20; ++trial) {
            MinhashFamily family(slots, rng());
            std::vector<uint64_t> features(1 + rng() % 500);
            for (auto &f : features) f = rng();
            EXPECT_EQ(signature(family, features), reference_signature(family, features));
        }
    }
}

TEST(MinhashSketch, EmptySetIsAllOnes) {
    MinhashFamily family(128, 0);
    const std::vector<uint32_t> empty = signature(family, {});
    ASSERT_EQ(empty.size(), 128u);
    for (uint32_t v : empty) EXPECT_EQ(v, 0xFFFFFFFFu);
    EXPECT_EQ(simhash::minhash_text("", 0, family), empty);
    EXPECT_EQ(simhash::minhash_text(" !? ", 4, family), empty);
}

TEST(MinhashSketch, MergeIsTheSignatureOfTheUnion) {
    std::mt19937_64 rng(8);
    for (int trial = 0; trial < 100; ++trial) {
        MinhashFamily family(1 + static_cast<int>(rng() % 300), rng());
        std::vector<uint64_t> a(rng() % 300), b(rng() % 300);
        for (auto &f : a) f = rng();
        for (auto &f : b) f = rng();
        if (!a.empty() && trial % 2) b.insert(b.end(), a.begin(), a.begin() + a.size() / 2);  // overlap
        std::vector<uint64_t> both = a;
        both.insert(both.end(), b.begin(), b.end());
        const auto sa = signature(family, a), sb = signature(family, b);
        std::vector<uint32_t> merged(sa.size());
        simhash::minhash_merge(sa.data(), sb.data(), sa.size(), merged.data());
        EXPECT_EQ(merged, signature(family, both));
    }
}

TEST(MinhashJaccard, MeanAbsoluteErrorAt128Slots) {
    // 1000 pairs of sets with true Jaccard spread uniformly over [0, 1], union sizes 50..2000,
    // random 64-bit feature hashes. The standard error of one estimate is
    // sqrt(J(1-J)/128), so the expected MAE is about 0.028 for J uniform on [0, 1].
    std::mt19937_64 rng(20240601);
    MinhashFamily family(simhash::kDefaultMinhashSlots, 0);
    const int pairs = 1000;
    double abs_sum = 0, signed_sum = 0, worst = 0;
    for (int k = 0; k < pairs; ++k) {
        const double target = (k + 0.5) / pairs;
        const size_t union_size = 50 + rng() % 1951;
        const size_t common = static_cast<size_t>(std::lround(target * union_size));
        const size_t only_a = (union_size - common) / 2 + (union_size - common) % 2 * (rng() % 2);
        std::vector<uint64_t> a, b;
        overlapping_sets(rng, common, only_a, union_size - common - only_a, a, b);
        const double truth = static_cast<double>(common) / static_cast<double>(union_size);
        const auto sa = signature(family, a), sb = signature(family, b);
        const double estimate = simhash::minhash_jaccard(sa.data(), sb.data(), sa.size());
        abs_sum += std::fabs(estimate - truth);
        signed_sum += estimate - truth;
        worst = std::max(worst, std::fabs(estimate - truth));
    }
    const double mae = abs_sum / pairs, bias = signed_sum / pairs;
    std::printf("[ MEASURE  ] minhash 128 slots, %d pairs: MAE %.4f, bias %+.4f, worst %.3f\n", pairs, mae,
                bias, worst);
    RecordProperty("mae", std::to_string(mae));
    EXPECT_LE(mae, 0.03);
    EXPECT_LE(std::fabs(bias), 0.01);
}

TEST(MinhashJaccard, IdenticalDisjointAndEmpty) {
    MinhashFamily family(128, 42);
    std::mt19937_64 rng(1);
    std::vector<uint64_t> a(1000), b(1000);
    for (auto &f : a) f = rng();
    for (auto &f : b) f = rng();
    const auto sa = signature(family, a), sb = signature(family, b);
    EXPECT_EQ(simhash::minhash_jaccard(sa.data(), sa.data(), sa.size()), 1.0);
    EXPECT_LE(simhash::minhash_jaccard(sa.data(), sb.data(), sa.size()), 0.05);
    EXPECT_EQ(simhash::minhash_jaccard(sa.data(), sb.data(), 0), 0.0);
}

TEST(MinhashSketch, RepeatedFeaturesDoNotChangeTheSignature) {
    // Repeats skip the slot updates through a table of recent features; the signature must be
    // that of the distinct set, whatever the order and however many repeats the table forgets.
    std::mt19937_64 rng(77);
    MinhashFamily family(64, 3);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<uint64_t> distinct(1 + rng() % 3000);
        for (auto &f : distinct) f = rng();
        if (trial % 5 == 0) distinct.push_back(0);  // the hash 0 is a feature like any other
        std::vector<uint64_t> stream;
        for (int i = 0; i < 4000; ++i) stream.push_back(distinct[rng() % distinct.size()]);
        stream.insert(stream.end(), distinct.begin(), distinct.end());
        MinhashSketch sketch(family);
        sketch.add_all(stream.data(), stream.size());
        EXPECT_EQ(sketch.signature(), reference_signature(family, distinct));
    }
    // From text: a line repeated has the same set of words as the line.
    const simhash::ShingleOptions word1{simhash::ShingleUnit::kWord, 1};
    const std::string line = "the same line of words again and again, the same line ";
    std::string repeated;
    for (int i = 0; i < 500; ++i) repeated += line;
    EXPECT_EQ(simhash::minhash_text(repeated.data(), repeated.size(), family, word1),
              simhash::minhash_text(line.data(), line.size(), family, word1));
}

TEST(Minhash64, BitIIsTheLowBitOfSlotI) {
    std::mt19937_64 rng(64);
    const MinhashFamily family(simhash::kMinhash64Slots, 0);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<uint64_t> features(1 + rng() % 400);
        for (auto &f : features) f = rng();
        const std::vector<uint32_t> sig = reference_signature(family, features);
        uint64_t expected = 0;
        for (int i = 0; i < simhash::kMinhash64Slots; ++i) expected |= static_cast<uint64_t>(sig[i] & 1) << i;
        EXPECT_EQ(simhash::minhash64_hashes(features.data(), features.size()), expected);
        EXPECT_EQ(simhash::minhash64_from_signature(sig.data()), expected);
    }
    const char *text = "Near duplicates: the same words, mostly. 近似重复的文档";
    const simhash::ShingleOptions word1{simhash::ShingleUnit::kWord, 1};
    EXPECT_EQ(simhash::minhash64_text(text, std::strlen(text), word1),
              simhash::minhash64_from_signature(simhash::minhash_text(text, std::strlen(text), family, word1).data()));
}

TEST(Minhash64, NoFeaturesGiveZero) {
    // A signature of no features has every low bit set; the fingerprint is 0 instead, as
    // SimHash's is.
    EXPECT_EQ(simhash::minhash64_hashes(nullptr, 0), 0u);
    EXPECT_EQ(simhash::minhash64_text("", 0), 0u);
    EXPECT_EQ(simhash::minhash64_text(" ;; ", 4), 0u);
    EXPECT_NE(simhash::minhash64_text("a", 1), 0u);
}

TEST(Minhash64, DistanceIsBinomialWithHalfTheJaccardDistance) {
    // Pairs of sets of Jaccard J (union 200..1200 features): each bit differs with probability
    // (1 - J) / 2, so the mean distance is 32 (1 - J) and its variance 64 q (1 - q). 2,000 pairs
    // per J give a mean within 0.15 bits of that (over 4 standard errors) for the fixed family.
    std::mt19937_64 rng(2010);
    for (double jaccard : {0.5, 0.8, 0.9, 0.95, 1.0}) {
        const int pairs = 2000;
        double sum = 0, sum_squares = 0;
        for (int k = 0; k < pairs; ++k) {
            const size_t union_size = 200 + rng() % 1001;
            const size_t common = static_cast<size_t>(std::lround(jaccard * union_size));
            const size_t only_a = (union_size - common) / 2;
            std::vector<uint64_t> a, b;
            overlapping_sets(rng, common, only_a, union_size - common - only_a, a, b);
            const double bits = __builtin_popcountll(simhash::minhash64_hashes(a.data(), a.size()) ^
                                                     simhash::minhash64_hashes(b.data(), b.size()));
            sum += bits;
            sum_squares += bits * bits;
        }
        const double q = (1 - jaccard) / 2, mean = sum / pairs;
        const double variance = sum_squares / pairs - mean * mean;
        std::printf("[ MEASURE  ] minhash64, J = %.2f: mean %.2f bits (expected %.2f), variance %.2f (%.2f)\n",
                    jaccard, mean, 64 * q, variance, 64 * q * (1 - q));
        EXPECT_NEAR(mean, 64 * q, 0.15) << "J = " << jaccard;
        EXPECT_NEAR(variance, 64 * q * (1 - q), 0.15 * 64 * q * (1 - q) + 0.01) << "J = " << jaccard;
    }
}

TEST(MinhashFamily, InvalidSlotCountsThrow) {
    EXPECT_THROW(MinhashFamily(0, 0), simhash::InvalidArgument);
    EXPECT_THROW(MinhashFamily(-1, 0), simhash::InvalidArgument);
    EXPECT_THROW(MinhashFamily(8193, 0), simhash::InvalidArgument);
    EXPECT_NO_THROW(MinhashFamily(1, 0));
    EXPECT_NO_THROW(MinhashFamily(8192, 0));
    MinhashFamily family(16, 0);
    EXPECT_THROW(simhash::minhash_text("abc", 3, family, simhash::ShingleOptions{simhash::ShingleUnit::kWord, 0}),
                 simhash::InvalidArgument);
}
