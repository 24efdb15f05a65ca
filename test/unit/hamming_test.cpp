// Hamming distance and the radius scan agree with the portable popcount, for every radius.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/hamming.h"

using simhash::hamming_distance;
using simhash::popcount_portable;

namespace {
int popcount_bit_by_bit(uint64_t x) {
    int n = 0;
    for (int i = 0; i < 64; ++i) n += (x >> i) & 1;
    return n;
}
uint64_t bits_of(int64_t v) { return static_cast<uint64_t>(v); }
}  // namespace

TEST(Hamming, KernelIsReported) {
    const std::string name = simhash::popcount_kernel_name();
    std::printf("[ MEASURE  ] popcount kernel: %s\n", name.c_str());
    EXPECT_TRUE(name == "popcnt" || name == "portable" || name == "builtin") << name;
    const std::string select = simhash::select_kernel_name();
    std::printf("[ MEASURE  ] selection kernel: %s\n", select.c_str());
    EXPECT_TRUE(select == "avx512" || select == "scalar") << select;
}

namespace {
// The kernel chosen for this CPU, and the scalar one: both must meet the same definition.
using SelectWithinRadius = size_t (*)(const uint64_t *, size_t, uint64_t, int, uint32_t *);
using SelectKeysWithin = size_t (*)(const uint32_t *, size_t, size_t, uint32_t, uint32_t, uint32_t, int, uint32_t *);
const SelectWithinRadius kRadiusKernels[] = {simhash::select_within_radius, simhash::select_within_radius_scalar};
const SelectKeysWithin kKeyKernels[] = {simhash::select_keys_within, simhash::select_keys_within_scalar};
}  // namespace

TEST(Hamming, PortablePopcountIsExact) {
    std::mt19937_64 rng(1);
    EXPECT_EQ(popcount_portable(0), 0);
    EXPECT_EQ(popcount_portable(~uint64_t{0}), 64);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(popcount_portable(uint64_t{1} << i), 1);
    for (int i = 0; i < 100000; ++i) {
        const uint64_t x = rng();
        ASSERT_EQ(popcount_portable(x), popcount_bit_by_bit(x));
    }
}

TEST(Hamming, DistanceAgreesWithPortablePopcount) {
    std::mt19937_64 rng(2);
    for (int i = 0; i < 200000; ++i) {
        const uint64_t a = rng(), b = i % 3 ? rng() : a ^ (uint64_t{1} << (i % 64));
        ASSERT_EQ(hamming_distance(a, b), popcount_portable(a ^ b));
        ASSERT_EQ(simhash::popcount64(a), popcount_portable(a));
    }
}

TEST(Hamming, NegativeValues) {
    // Fingerprints are stored as signed bigint: the distance is over the 64-bit two's complement.
    EXPECT_EQ(hamming_distance(bits_of(-1), bits_of(0)), 64);
    EXPECT_EQ(hamming_distance(bits_of(-1), bits_of(-1)), 0);
    EXPECT_EQ(hamming_distance(bits_of(INT64_MIN), bits_of(0)), 1);
    EXPECT_EQ(hamming_distance(bits_of(INT64_MIN), bits_of(INT64_MAX)), 64);
    EXPECT_EQ(hamming_distance(bits_of(-2), bits_of(1)), 64);
    EXPECT_EQ(hamming_distance(bits_of(-1), bits_of(1)), 63);
    EXPECT_EQ(hamming_distance(bits_of(-1), bits_of(INT64_MAX)), 1);
}

TEST(Hamming, SelectWithinRadiusForEveryRadius) {
    std::mt19937_64 rng(3);
    // Random fingerprints plus controlled distances from the query, negatives and extremes.
    const uint64_t query = rng();
    std::vector<uint64_t> fps;
    for (int d = 0; d <= 64; ++d) {
        uint64_t mask = 0;
        std::vector<int> bits(64);
        for (int i = 0; i < 64; ++i) bits[i] = i;
        std::shuffle(bits.begin(), bits.end(), rng);
        for (int i = 0; i < d; ++i) mask |= uint64_t{1} << bits[i];
        fps.push_back(query ^ mask);
    }
    for (int i = 0; i < 1000; ++i) fps.push_back(rng());
    fps.push_back(0);
    fps.push_back(~uint64_t{0});
    fps.push_back(bits_of(INT64_MIN));
    for (SelectWithinRadius select : kRadiusKernels)
    for (uint64_t q : {query, uint64_t{0}, ~uint64_t{0}}) {
        for (int radius = -1; radius <= 64; ++radius) {
            // Every prefix length around the vector widths, so the vectorized loops' tails are covered.
            for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{15}, size_t{16},
                             size_t{17}, size_t{65}, fps.size()}) {
                std::vector<uint32_t> expected;
                for (size_t i = 0; i < n; ++i)
                    if (popcount_portable(fps[i] ^ q) <= radius) expected.push_back(static_cast<uint32_t>(i));
                std::vector<uint32_t> matches(n + 1, 0xDEADBEEFu);
                const size_t found = select(fps.data(), n, q, radius, matches.data());
                ASSERT_EQ(matches[n], 0xDEADBEEFu) << "wrote past n: radius " << radius << " n " << n;
                matches.resize(found);
                ASSERT_EQ(matches, expected) << "radius " << radius << " n " << n;
            }
        }
    }
    // Radius -1 matches nothing, radius 64 everything.
    std::vector<uint32_t> out(fps.size());
    EXPECT_EQ(simhash::select_within_radius(fps.data(), fps.size(), query, -1, out.data()), 0u);
    EXPECT_EQ(simhash::select_within_radius(fps.data(), fps.size(), query, 64, out.data()), fps.size());
    EXPECT_EQ(simhash::select_within_radius(fps.data(), fps.size(), query, 0, out.data()), 1u);
}

// The probe filter over (key, position) pairs: exactly the keys with the lead bits and within the
// budget, for every lead width a directory leaves (0..16 bits) and every budget.
TEST(SelectKeysWithin, MatchesTheDefinition) {
    std::mt19937_64 rng(9);
    std::vector<uint32_t> pairs;
    const uint32_t query = 0x5A5AC3C3u;
    for (int i = 0; i < 700; ++i) {
        uint32_t key = static_cast<uint32_t>(rng());
        if (i % 3 == 0) key = query ^ (1u << (i % 32)) ^ (i % 2 ? 1u << ((i / 2) % 32) : 0);  // near the query
        pairs.push_back(key);
        pairs.push_back(static_cast<uint32_t>(i));  // the position, never read as a key
    }
    const size_t all = pairs.size() / 2;
    std::vector<uint32_t> keys;  // the same keys with stride 1, as a run's copy holds them
    for (size_t i = 0; i < all; ++i) keys.push_back(pairs[2 * i]);
    for (SelectKeysWithin select : kKeyKernels)
    for (size_t stride : {size_t{1}, size_t{2}})
    for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{33}, all})
    for (int lead_bits : {0, 1, 4, 9, 16}) {
        const uint32_t mask = lead_bits == 0 ? 0 : ~uint32_t{0} << (32 - lead_bits);
        for (uint32_t lead : {query, ~query, uint32_t{0}}) {
            for (int budget = -1; budget <= 33; ++budget) {
                std::vector<uint32_t> expected;
                for (size_t i = 0; i < n; ++i)
                    if (((pairs[2 * i] ^ lead) & mask) == 0 && popcount_portable(pairs[2 * i] ^ query) <= budget)
                        expected.push_back(static_cast<uint32_t>(i));
                std::vector<uint32_t> matches(n + 1, 0xDEADBEEFu);
                const size_t found = select(stride == 1 ? keys.data() : pairs.data(), stride, n, lead, mask, query,
                                            budget, matches.data());
                ASSERT_EQ(matches[n], 0xDEADBEEFu) << "wrote past n: " << n;
                matches.resize(found);
                ASSERT_EQ(matches, expected) << lead_bits << " " << budget << " n " << n << " stride " << stride;
            }
        }
    }
    uint32_t none[1];
    EXPECT_EQ(simhash::select_keys_within(pairs.data(), 2, 0, 0, 0, query, 32, none), 0u);
}

TEST(HammingBallSize, SumsBinomials) {
    EXPECT_EQ(simhash::hamming_ball_size(16, -1), 0.0);
    EXPECT_EQ(simhash::hamming_ball_size(16, 0), 1.0);
    EXPECT_EQ(simhash::hamming_ball_size(16, 1), 17.0);
    EXPECT_EQ(simhash::hamming_ball_size(16, 3), 697.0);
    EXPECT_EQ(simhash::hamming_ball_size(16, 40), 65536.0);  // the whole space
    EXPECT_EQ(simhash::hamming_ball_size(32, 3), 5489.0);
    EXPECT_DOUBLE_EQ(simhash::hamming_ball_size(64, 64), 18446744073709551616.0);
}
