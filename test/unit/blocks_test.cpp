#include "core/blocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "core/hamming.h"

namespace {

TEST(Blocks, LayoutCoversEveryBitOnceTopFirst) {
    for (int count = 1; count <= 64; ++count) {
        const simhash::BlockLayout layout = simhash::block_layout(count);
        uint64_t covered = 0;
        int total = 0;
        for (int i = 0; i < count; ++i) {
            EXPECT_GE(layout.width[i], 64 / count);
            EXPECT_LE(layout.width[i], 64 / count + 1);
            if (i > 0) {
                EXPECT_LE(layout.width[i], layout.width[i - 1]);  // the longer blocks first
            }
            EXPECT_EQ(layout.shift[i], total);
            // the bits of block i, from its value of an all-ones key placed back
            const uint64_t bits = layout.width[i] >= 64 ? ~uint64_t{0}
                                                        : ((uint64_t{1} << layout.width[i]) - 1) << simhash::block_low_bit(layout, i);
            EXPECT_EQ(covered & bits, 0u);
            covered |= bits;
            total += layout.width[i];
        }
        EXPECT_EQ(total, 64);
        EXPECT_EQ(covered, ~uint64_t{0});
    }
}

TEST(Blocks, ValuesAreTheBitsOfEachBlock) {
    const simhash::BlockLayout four = simhash::block_layout(4);
    const uint64_t key = 0x0123456789ABCDEFull;
    EXPECT_EQ(simhash::block_value(key, four, 0), 0x0123u);
    EXPECT_EQ(simhash::block_value(key, four, 3), 0xCDEFu);
    const simhash::BlockLayout three = simhash::block_layout(3);  // 22, 21, 21 bits
    EXPECT_EQ(three.width[0], 22);
    EXPECT_EQ(simhash::block_value(key, three, 0), key >> 42);
    EXPECT_EQ(simhash::block_value(key, three, 2), key & ((uint64_t{1} << 21) - 1));
    const simhash::BlockLayout one = simhash::block_layout(1);
    EXPECT_EQ(simhash::block_value(key, one, 0), key);
}

// The cheapest way for two fingerprints to escape every probe is to differ in block_probe_radius + 1
// bits of every block (impossible in a block narrower than that): that must take more bits than
// the radius allows, for every block count and radius.
TEST(Blocks, RefinedPigeonholeLeavesNoEscape) {
    for (int count = 1; count <= 64; ++count) {
        const simhash::BlockLayout layout = simhash::block_layout(count);
        for (int radius = 0; radius <= 64; ++radius) {
            int escape = 0;
            bool possible = true;
            for (int i = 0; i < count; ++i) {
                const int rb = simhash::block_probe_radius(radius, count, i);
                EXPECT_GE(rb, radius / count - 1);
                EXPECT_LE(rb, radius / count);
                if (rb + 1 > layout.width[i]) possible = false;
                escape += rb + 1;
            }
            EXPECT_TRUE(!possible || escape > radius) << count << " blocks, radius " << radius;
            EXPECT_EQ(escape, radius + 1) << "no block probes further than it must";
        }
    }
}

TEST(Blocks, RandomPairsWithinTheRadiusMeetInSomeProbedBlock) {
    std::mt19937_64 rng(42);
    for (int trial = 0; trial < 20000; ++trial) {
        const int count = 2 + static_cast<int>(rng() % 7);
        const int radius = static_cast<int>(rng() % 25);
        const simhash::BlockLayout layout = simhash::block_layout(count);
        const uint64_t a = rng();
        uint64_t b = a;
        for (int flips = 0; simhash::hamming_distance(a, b) < radius && flips < 200; ++flips) b ^= uint64_t{1} << (rng() % 64);
        bool met = false;
        for (int i = 0; i < count; ++i)
            met |= simhash::popcount64(simhash::block_value(a ^ b, layout, i)) <= simhash::block_probe_radius(radius, count, i);
        EXPECT_TRUE(met) << count << " blocks, radius " << radius;
    }
}

TEST(Blocks, RefinedRadiiProbeFewerValues) {
    auto probes = [](int radius) {
        double total = 0;
        for (int i = 0; i < 4; ++i) total += simhash::hamming_ball_size(16, simhash::block_probe_radius(radius, 4, i));
        return total;
    };
    EXPECT_EQ(probes(0), 1);      // one exact block of four
    EXPECT_EQ(probes(2), 3);      // three exact blocks
    EXPECT_EQ(probes(3), 4);
    EXPECT_EQ(probes(4), 17 + 3);
    EXPECT_EQ(probes(7), 4 * 17);
    EXPECT_EQ(probes(12), 697 + 3 * 137);
}

TEST(Blocks, AutomaticCountFollowsTheEntries) {
    // Blocks of about log2(entries) - 5 bits: more, shorter blocks for small runs, four (16 bits)
    // from about a million entries on, three (21-22 bits) from 2^27.
    EXPECT_EQ(simhash::auto_block_count(0), 8);
    EXPECT_EQ(simhash::auto_block_count(1), 8);
    EXPECT_EQ(simhash::auto_block_count(1000), 8);
    EXPECT_EQ(simhash::auto_block_count(18624), 7);  // a pending list written out at the default limit
    EXPECT_EQ(simhash::auto_block_count(50000), 6);
    EXPECT_EQ(simhash::auto_block_count(100000), 6);
    EXPECT_EQ(simhash::auto_block_count(300000), 5);
    EXPECT_EQ(simhash::auto_block_count(1000000), 4);
    EXPECT_EQ(simhash::auto_block_count(10000000), 4);
    EXPECT_EQ(simhash::auto_block_count(100000000), 4);
    EXPECT_EQ(simhash::auto_block_count((uint64_t{1} << 27) - 1), 4);
    EXPECT_EQ(simhash::auto_block_count(uint64_t{1} << 27), 3);  // 3 blocks of 21-22 bits
    EXPECT_EQ(simhash::auto_block_count(300000000), 3);
    EXPECT_EQ(simhash::auto_block_count(uint64_t{1} << 40), 3);
    int previous = 8;
    for (uint64_t n = 1; n < (uint64_t{1} << 36); n = n * 5 / 4 + 1) {
        const int count = simhash::auto_block_count(n);
        EXPECT_LE(count, previous) << n;  // never more blocks for more entries
        EXPECT_GE(count, n < simhash::kThreeBlocksFrom ? 4 : 3);
        previous = count;
    }
}

}  // namespace
