#include "core/slot_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/hamming.h"

namespace {

using Pairs = std::set<std::pair<uint32_t, uint32_t>>;  // (center, library row)

// The sweep as the index runs it, over an in-memory library: for each of the two half tables
// (keyed on block 0 and on block 2) the library's rotated keys sorted, read slot by slot; an entry
// whose next block the slot's bitmap wants is compared with the slot's centers: in full for block
// 0's table (it holds whole fingerprints), on the 48 bits a ref holds first for block 2's (only an
// entry passing that is fetched and compared in full).
Pairs sweep(const std::vector<uint64_t> &library, const std::vector<uint64_t> &centers, int radius,
            const std::vector<bool> &skip = {}) {
    Pairs found;
    for (int t : {0, 2}) {
        std::vector<std::pair<uint64_t, uint32_t>> table;
        for (uint32_t i = 0; i < library.size(); ++i) table.emplace_back(simhash::rotate_blocks(library[i], t), i);
        std::sort(table.begin(), table.end());
        std::vector<uint64_t> keys;
        std::vector<uint32_t> numbers;
        for (uint32_t c = 0; c < centers.size(); ++c) {
            if (!skip.empty() && skip[c]) continue;
            keys.push_back(simhash::rotate_blocks(centers[c], t));
            numbers.push_back(c);
        }
        std::vector<uint64_t> group_memory(simhash::slot_groups_bytes(keys.size()) / 8 + 1);
        simhash::SlotGroups groups;
        simhash::slot_groups_build(&groups, group_memory.data(), keys.data(), numbers.data(), keys.size());
        std::vector<uint64_t> wants_memory(simhash::slot_wants_bytes(keys.size()) / 8 + 1);
        auto wants = std::make_unique<simhash::SlotWants>();
        simhash::slot_wants_init(wants.get(), wants_memory.data(), keys.size());
        size_t e = 0;
        for (uint32_t slot = 0; slot < simhash::kSlotSweepSlots; ++slot) {
            const size_t begin = e;
            while (e < table.size() && simhash::slot_of(table[e].first) == slot) ++e;
            if (!simhash::slot_groups_want(&groups, slot)) continue;
            simhash::slot_wants_fill(wants.get(), &groups, slot);
            EXPECT_GT(wants->n, 0u);
            for (size_t i = begin; i < e; ++i) {
                const uint64_t entry = table[i].first;
                if (!simhash::slot_wants_next(wants.get(), simhash::next_block_of(entry))) continue;
                if (t != 0 && !simhash::slot_wants_any48(wants.get(), entry >> 16, radius)) continue;
                const size_t m = simhash::slot_wants_select(wants.get(), entry, radius);
                for (size_t k = 0; k < m; ++k) found.emplace(wants->centers[wants->matches[k]], table[i].second);
            }
        }
    }
    return found;
}

Pairs brute(const std::vector<uint64_t> &library, const std::vector<uint64_t> &centers, int radius,
            const std::vector<bool> &skip = {}) {
    Pairs out;
    for (uint32_t c = 0; c < centers.size(); ++c) {
        if (!skip.empty() && skip[c]) continue;
        for (uint32_t i = 0; i < library.size(); ++i)
            if (simhash::hamming_distance(centers[c], library[i]) <= radius) out.emplace(c, i);
    }
    return out;
}

// A library of n fingerprints (bits outside `mask` zero), and centers: half of them library rows
// with 0-3 bits flipped (every spread of the flips over the four blocks occurs), half random.
struct Data {
    std::vector<uint64_t> library;
    std::vector<uint64_t> centers;
};
Data planted(size_t n, size_t ncenters, uint64_t mask, uint32_t seed) {
    std::mt19937_64 rng(seed);
    Data d;
    for (size_t i = 0; i < n; ++i) d.library.push_back(rng() & mask);
    for (size_t c = 0; c < ncenters; ++c) {
        if (c % 2 == 0) {
            uint64_t fp = d.library[rng() % n];
            const int flips = static_cast<int>(rng() % 4);
            for (int f = 0; f < flips; ++f) fp ^= uint64_t{1} << (rng() % 64);
            d.centers.push_back(fp);
        } else {
            d.centers.push_back(rng() & mask);
        }
    }
    return d;
}

TEST(SlotSweep, RotateBlocksPutsTheTablesBlockOnTop) {
    const uint64_t key = 0x0123456789abcdefULL;
    EXPECT_EQ(simhash::rotate_blocks(key, 0), key);
    EXPECT_EQ(simhash::rotate_blocks(key, 2), 0x89abcdef01234567ULL);
    EXPECT_EQ(simhash::slot_of(simhash::rotate_blocks(key, 2)), 0x89abu);
    EXPECT_EQ(simhash::next_block_of(simhash::rotate_blocks(key, 2)), 0xcdefu);
}

TEST(SlotSweep, EveryPairWithinTheRadiusUniform) {
    const Data d = planted(20000, 4000, ~uint64_t{0}, 1);
    for (int radius = 0; radius <= simhash::kSlotSweepMaxRadius; ++radius) {
        SCOPED_TRACE(radius);
        const Pairs expected = brute(d.library, d.centers, radius);
        EXPECT_GT(expected.size(), 400u);
        EXPECT_EQ(sweep(d.library, d.centers, radius), expected);
    }
}

// Every spread of three flipped bits over the blocks, placed on purpose: (3,0,0,0), (1,1,1,0),
// (0,1,1,1) ... each has a half within one bit, and the sweep finds it.
TEST(SlotSweep, EverySpreadOfThreeBitsOverTheBlocks) {
    std::mt19937_64 rng(7);
    std::vector<uint64_t> library, centers;
    for (int a = 0; a < 4; ++a)
        for (int b = a; b < 4; ++b)
            for (int c = b; c < 4; ++c)
                for (int rep = 0; rep < 20; ++rep) {
                    const uint64_t fp = rng();
                    library.push_back(fp);
                    uint64_t near = fp;
                    for (int block : {a, b, c}) {
                        uint64_t bit;
                        do bit = uint64_t{1} << (16 * (3 - block) + rng() % 16);
                        while ((near ^ fp) & bit);
                        near ^= bit;
                    }
                    centers.push_back(near);
                }
    const Pairs expected = brute(library, centers, 3);
    EXPECT_EQ(expected.size(), centers.size());
    EXPECT_EQ(sweep(library, centers, 3), expected);
    // At radius 2 none is found: each is three bits away.
    EXPECT_TRUE(sweep(library, centers, 2).empty());
}

// Skewed libraries and batches: most bits constant (the low 24, then all but 8), so that slots and
// next blocks are crowded and a slot holds hundreds of centers.
TEST(SlotSweep, EveryPairWithinTheRadiusSkewed) {
    for (uint64_t mask : {~uint64_t{0} << 24, uint64_t{0xff00000000000000}, uint64_t{0x00000000ff00ff00}}) {
        SCOPED_TRACE(mask);
        const Data d = planted(3000, 1500, mask, 3);
        for (int radius = 0; radius <= simhash::kSlotSweepMaxRadius; ++radius) {
            SCOPED_TRACE(radius);
            EXPECT_EQ(sweep(d.library, d.centers, radius), brute(d.library, d.centers, radius));
        }
    }
}

// Centers left out (a batch that needs one match a center skips those that have one) are neither
// searched nor reported, and do not disturb the others.
TEST(SlotSweep, SkippedCentersAreLeftOut) {
    const Data d = planted(20000, 3000, ~uint64_t{0}, 5);
    std::vector<bool> skip(d.centers.size());
    for (size_t c = 0; c < skip.size(); c += 3) skip[c] = true;
    const Pairs expected = brute(d.library, d.centers, 3, skip);
    EXPECT_GT(expected.size(), 500u);
    EXPECT_EQ(sweep(d.library, d.centers, 3, skip), expected);
}

// The bitmap forgets the previous slot's wants: after a crowded slot, a slot with one center
// wants only that center's values.
TEST(SlotSweep, WantsOfOneSlotOnly) {
    std::vector<uint64_t> keys = {0x0001000200000000ULL, 0x0001000300000000ULL, 0x0400123400000000ULL};
    std::vector<uint32_t> numbers = {0, 1, 2};
    std::vector<uint64_t> group_memory(simhash::slot_groups_bytes(keys.size()) / 8 + 1);
    simhash::SlotGroups groups;
    simhash::slot_groups_build(&groups, group_memory.data(), keys.data(), numbers.data(), keys.size());
    EXPECT_TRUE(simhash::slot_groups_want(&groups, 0x0001));
    EXPECT_TRUE(simhash::slot_groups_want(&groups, 0x0000));   // one bit from 0x0001
    EXPECT_TRUE(simhash::slot_groups_want(&groups, 0x0401));   // one bit from 0x0400
    EXPECT_FALSE(simhash::slot_groups_want(&groups, 0x0006));  // two bits or more from both
    std::vector<uint64_t> wants_memory(simhash::slot_wants_bytes(keys.size()) / 8 + 1);
    auto wants = std::make_unique<simhash::SlotWants>();
    simhash::slot_wants_init(wants.get(), wants_memory.data(), keys.size());
    simhash::slot_wants_fill(wants.get(), &groups, 0x0001);
    EXPECT_EQ(wants->n, 2u);
    EXPECT_EQ(wants->n_own, 2u);
    EXPECT_TRUE(simhash::slot_wants_next(wants.get(), 0x0002));
    EXPECT_TRUE(simhash::slot_wants_next(wants.get(), 0x8002));  // one bit from the own center's 0x0002
    EXPECT_FALSE(simhash::slot_wants_next(wants.get(), 0x1234));
    simhash::slot_wants_fill(wants.get(), &groups, 0x0400);
    EXPECT_EQ(wants->n, 1u);
    EXPECT_FALSE(simhash::slot_wants_next(wants.get(), 0x0002));
    EXPECT_FALSE(simhash::slot_wants_next(wants.get(), 0x8002));
    EXPECT_TRUE(simhash::slot_wants_next(wants.get(), 0x1234));
    EXPECT_TRUE(simhash::slot_wants_next(wants.get(), 0x1235));
    simhash::slot_wants_fill(wants.get(), &groups, 0x0401);  // 0x0400 is one bit away: its value only
    EXPECT_EQ(wants->n_own, 0u);
    EXPECT_TRUE(simhash::slot_wants_next(wants.get(), 0x1234));
    EXPECT_FALSE(simhash::slot_wants_next(wants.get(), 0x1235));
}

}  // namespace
