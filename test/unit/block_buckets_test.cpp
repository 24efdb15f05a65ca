#include "core/block_buckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/hamming.h"

namespace {

struct Table {
    std::vector<uint64_t> fps;
    std::vector<uint32_t> memory;
    simhash::BlockBuckets buckets{};

    Table(size_t capacity, int bits, const simhash::BitPermuter *order = nullptr) {
        memory.resize(simhash::block_buckets_bytes(bits, capacity) / sizeof(uint32_t));
        simhash::block_buckets_init(&buckets, memory.data(), bits, capacity, order);
        fps.reserve(capacity);
    }
    void append(uint64_t fp) {
        fps.push_back(fp);
        simhash::block_buckets_link(&buckets, fps.data(), fps.size());
    }
    // The same entries as sorted tables (what a run's copy uses): from here on, no appends.
    void freeze(int bits, const simhash::BitPermuter *order = nullptr) {
        memory.assign(simhash::block_buckets_frozen_bytes(bits, fps.size()) / sizeof(uint32_t), 0);
        simhash::block_buckets_freeze(&buckets, memory.data(), bits, fps.data(), fps.size(), order);
    }
    std::vector<uint32_t> search(uint64_t q, int radius) const {
        std::vector<uint32_t> out;
        const size_t n = simhash::block_buckets_search(
            &buckets, fps.data(), q, radius,
            [](uint32_t index, void *context) { static_cast<std::vector<uint32_t> *>(context)->push_back(index); },
            &out);
        EXPECT_EQ(n, out.size());
        std::sort(out.begin(), out.end());
        return out;
    }
    std::vector<uint32_t> brute(uint64_t q, int radius) const {
        std::vector<uint32_t> out;
        for (size_t i = 0; i < fps.size(); ++i)
            if (simhash::hamming_distance(fps[i], q) <= radius) out.push_back(static_cast<uint32_t>(i));
        return out;
    }
};

uint64_t flip_bits(uint64_t fp, int k, std::mt19937_64 &rng) {
    std::vector<int> bits(64);
    for (int i = 0; i < 64; ++i) bits[i] = i;
    std::shuffle(bits.begin(), bits.end(), rng);
    for (int i = 0; i < k; ++i) fp ^= uint64_t{1} << bits[i];
    return fp;
}

TEST(BlockBuckets, BitsFollowTheEntryCount) {
    EXPECT_EQ(simhash::block_buckets_bits_for(0), 8);
    EXPECT_EQ(simhash::block_buckets_bits_for(256), 8);
    EXPECT_EQ(simhash::block_buckets_bits_for(257), 9);
    EXPECT_EQ(simhash::block_buckets_bits_for(18624), 15);
    EXPECT_EQ(simhash::block_buckets_bits_for(10000000), 16);
}

TEST(BlockBuckets, EmptyFindsNothing) {
    Table t(16, 8);
    EXPECT_TRUE(t.search(0, 64).empty());
}

// Every radius, uniform fingerprints with planted neighbours at every distance: exactly the brute
// force answer, each entry once, whether the search probes or scans.
TEST(BlockBuckets, ExactAtEveryRadiusOnUniformData) {
    std::mt19937_64 rng(42);
    const uint64_t center = rng();
    Table t(20000, simhash::block_buckets_bits_for(20000));
    for (int i = 0; i < 19000; ++i) t.append(rng());
    for (int k = 0; k <= 64; ++k)
        for (int copy = 0; copy < 10; ++copy) t.append(flip_bits(center, k, rng));
    for (int radius = 0; radius <= 64; ++radius) EXPECT_EQ(t.search(center, radius), t.brute(center, radius)) << radius;
    EXPECT_EQ(t.search(center, 100), t.brute(center, 64));
    EXPECT_TRUE(t.search(center, -1).empty());
}

// Constant bits (a whole constant block, and a block with 12 constant bits) keep answers exact.
TEST(BlockBuckets, ExactOnSkewedData) {
    std::mt19937_64 rng(7);
    Table t(5000, 8);  // few buckets: long chains
    for (int i = 0; i < 5000; ++i) {
        uint64_t fp = rng();
        fp &= ~uint64_t{0xFFFF} << 48;  // block 0 constant
        fp |= uint64_t{0x0ABC} << 16;   // 12 constant bits in block 2
        fp &= ~(uint64_t{0xFFF} << 20) | (uint64_t{0xABC} << 20);
        t.append(fp);
    }
    for (int q = 0; q < 20; ++q) {
        const uint64_t query = flip_bits(t.fps[static_cast<size_t>(q) * 97], q % 9, rng);
        for (int radius : {0, 1, 3, 4, 7, 8, 12, 15, 16, 20})
            EXPECT_EQ(t.search(query, radius), t.brute(query, radius)) << q << " " << radius;
    }
}

// A run's copy cuts blocks in the run's bit order: still exact, and the constant low bits no longer
// make one table's chains hold everything (fewer entries walked at radius 3).
TEST(BlockBuckets, ExactInARunsBitOrder) {
    std::mt19937_64 rng(11);
    std::vector<uint64_t> fps(20000);
    for (auto &fp : fps) fp = (rng() & ~uint64_t{0xFFF}) | 0x5A5;
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : fps) simhash::bit_counts_add(&counts, fp);
    const int lengths[4] = {16, 16, 16, 16};
    simhash::BitPermutation order;
    ASSERT_TRUE(simhash::choose_bit_permutation(counts, lengths, 4, &order));
    const simhash::BitPermuter permuter(order);
    Table plain(fps.size(), 15), permuted(fps.size(), 15, &permuter);
    for (uint64_t fp : fps) {
        plain.append(fp);
        permuted.append(fp);
    }
    size_t walked_plain = 0, walked_permuted = 0;
    for (int q = 0; q < 30; ++q) {
        const uint64_t query = flip_bits(fps[static_cast<size_t>(q) * 613], q % 6, rng);
        for (int radius : {0, 2, 3, 5, 7, 9, 13})
            EXPECT_EQ(permuted.search(query, radius), permuted.brute(query, radius)) << q << " " << radius;
        // entries in the query's bucket of the low table: all 20,000 share 16 values in plain order
        const uint32_t low = static_cast<uint32_t>(query & 0xFFFF);
        for (uint64_t fp : fps) walked_plain += (fp & 0xFFFF) == low;
        const uint64_t key = permuter.key(query);
        for (uint64_t fp : fps) walked_permuted += (permuter.key(fp) & 0xFFFF) == (key & 0xFFFF);
    }
    EXPECT_GT(walked_plain, 20 * walked_permuted);
}

// Frozen tables answer exactly like the chains at every radius, with directories of every size
// (the block's low bits then sit in the stored keys), on uniform data with planted neighbours,
// skewed data, and in a run's bit order.
TEST(BlockBuckets, FrozenTablesAreExact) {
    std::mt19937_64 rng(5);
    const uint64_t center = rng();
    std::vector<uint64_t> uniform;
    for (int i = 0; i < 6000; ++i) uniform.push_back(rng());
    for (int k = 0; k <= 64; ++k)
        for (int copy = 0; copy < 5; ++copy) uniform.push_back(flip_bits(center, k, rng));
    std::vector<uint64_t> skewed;
    for (int i = 0; i < 6000; ++i) skewed.push_back((rng() & ~uint64_t{0xFFF}) | 0x5A5);
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    for (uint64_t fp : skewed) simhash::bit_counts_add(&counts, fp);
    const int lengths[4] = {16, 16, 16, 16};
    simhash::BitPermutation order;
    ASSERT_TRUE(simhash::choose_bit_permutation(counts, lengths, 4, &order));
    const simhash::BitPermuter permuter(order);
    for (int bits : {1, 5, 8, 13, 16}) {
        for (const simhash::BitPermuter *with : {static_cast<const simhash::BitPermuter *>(nullptr), &permuter}) {
            Table u(uniform.size(), 8), s(skewed.size(), 8);
            for (uint64_t fp : uniform) u.fps.push_back(fp);
            for (uint64_t fp : skewed) s.fps.push_back(fp);
            u.freeze(bits, with);
            s.freeze(bits, with);
            for (int radius = 0; radius <= 64; radius += radius < 20 ? 1 : 11)
                EXPECT_EQ(u.search(center, radius), u.brute(center, radius)) << bits << " " << radius;
            for (int q = 0; q < 12; ++q) {
                const uint64_t query = flip_bits(skewed[static_cast<size_t>(q) * 331], q % 7, rng);
                for (int radius : {0, 1, 3, 4, 7, 9, 13})
                    EXPECT_EQ(s.search(query, radius), s.brute(query, radius)) << bits << " " << q << " " << radius;
            }
        }
    }
    Table empty(0, 8);
    empty.freeze(8);
    EXPECT_TRUE(empty.search(center, 3).empty());
}

// Appends after searches are found (the pending list grows between queries).
TEST(BlockBuckets, IncrementalAppends) {
    std::mt19937_64 rng(3);
    Table t(3000, 10);
    const uint64_t center = rng();
    for (int round = 0; round < 30; ++round) {
        for (int i = 0; i < 90; ++i) t.append(rng());
        t.append(flip_bits(center, round % 5, rng));
        for (int radius : {0, 2, 3, 4, 7}) EXPECT_EQ(t.search(center, radius), t.brute(center, radius));
    }
}

}  // namespace
