#include "core/value_groups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/blocks.h"
#include "core/hamming.h"

namespace {

struct Groups {
    std::vector<uint64_t> memory;
    simhash::ValueGroups groups;
    Groups(int bits, const std::vector<uint32_t> &blocks)
        : memory(simhash::value_groups_bytes(bits, blocks.size()) / 8 + 1) {
        simhash::value_groups_build(&groups, memory.data(), bits, blocks.data(), blocks.size());
    }
};

// The centers (positions as given) that value_groups_gather finds, through their ranks.
std::vector<uint32_t> gather(const simhash::ValueGroups &groups, uint32_t value, int radius) {
    std::vector<uint32_t> out(groups.n + 1);
    out.resize(simhash::value_groups_gather(&groups, value, radius, out.data()));
    for (uint32_t &k : out) k = groups.members[k];
    return out;
}

// Every center within the radius of the value, once, the value's own ones first in their order.
TEST(ValueGroups, GatherFindsTheBallOnce) {
    std::mt19937_64 rng(7);
    for (int bits : {1, 5, 12, 22}) {
        const uint32_t mask = static_cast<uint32_t>((uint64_t{1} << bits) - 1);
        std::vector<uint32_t> blocks;
        for (int i = 0; i < 3000; ++i) blocks.push_back(static_cast<uint32_t>(rng()) & (bits > 12 ? 0xfff : mask));
        for (int i = 0; i < 200; ++i) blocks.push_back(blocks[i] ^ (uint32_t{1} << (rng() % bits)));
        Groups g(bits, blocks);
        for (int trial = 0; trial < 300; ++trial) {
            const uint32_t value = trial < 200 ? blocks[rng() % blocks.size()] : static_cast<uint32_t>(rng()) & mask;
            for (int radius : {0, 1}) {
                const std::vector<uint32_t> got = gather(g.groups, value, radius);
                std::vector<uint32_t> want, own;
                for (uint32_t i = 0; i < blocks.size(); ++i) {
                    if (blocks[i] == value) own.push_back(i);
                    if (simhash::popcount64(blocks[i] ^ value) <= radius) want.push_back(i);
                }
                ASSERT_GE(got.size(), own.size());
                EXPECT_EQ(std::vector<uint32_t>(got.begin(), got.begin() + own.size()), own) << bits << " " << value;
                std::vector<uint32_t> sorted = got;
                std::sort(sorted.begin(), sorted.end());
                EXPECT_EQ(sorted, want) << "bits " << bits << " value " << value << " radius " << radius;
            }
        }
    }
}

// The marked slots are exactly those holding a value within the radius of some center.
TEST(ValueGroups, MarkSetsTheWantedSlots) {
    std::mt19937_64 rng(11);
    for (int bits : {6, 10, 14}) {
        for (int shift : {0, 1, 3}) {
            for (size_t n : {size_t{0}, size_t{1}, size_t{5}, size_t{300}}) {
                std::vector<uint32_t> blocks;
                for (size_t i = 0; i < n; ++i) blocks.push_back(static_cast<uint32_t>(rng()) & ((1u << bits) - 1));
                Groups g(bits, blocks);
                for (int radius : {0, 1}) {
                    std::vector<uint64_t> bitmap(((size_t{1} << (bits - shift)) + 63) / 64);
                    simhash::value_groups_mark(&g.groups, radius, shift, bitmap.data());
                    for (uint32_t slot = 0; slot < (1u << (bits - shift)); ++slot) {
                        bool want = false;
                        for (uint32_t b : blocks)
                            for (uint32_t v = slot << shift; v < (slot + 1) << shift; ++v)
                                want = want || simhash::popcount64(b ^ v) <= radius;
                        EXPECT_EQ((bitmap[slot / 64] >> (slot % 64)) & 1, want ? 1u : 0u)
                            << "bits " << bits << " shift " << shift << " n " << n << " radius " << radius << " slot " << slot;
                    }
                }
            }
        }
    }
}

// The check a bulk load makes against a run of three tables (blocks of 22, 21 and 21 bits), as the
// index sweeps it: for each table probed, each library entry is compared with the centers its
// block value gathers and reported unless an earlier table's block is within that table's radius.
// Every pair within the radius comes back exactly once.
TEST(ValueGroups, SweepOfThreeTablesFindsEveryPairOnce) {
    std::mt19937_64 rng(23);
    const simhash::BlockLayout layout = simhash::block_layout(3);
    std::vector<uint64_t> library, centers;
    for (int i = 0; i < 40000; ++i) library.push_back(rng());
    for (int i = 0; i < 3000; ++i) {
        uint64_t c = i % 3 == 0 ? rng() : library[rng() % library.size()];
        for (int flips = static_cast<int>(rng() % 6); flips > 0; --flips) c ^= uint64_t{1} << (rng() % 64);
        centers.push_back(c);
    }
    for (int radius = 0; radius <= 5; ++radius) {
        std::multiset<std::pair<uint32_t, uint32_t>> found;
        for (int t = 0; t < 3; ++t) {
            const int rb = simhash::block_probe_radius(radius, 3, t);
            if (rb < 0) continue;
            ASSERT_LE(rb, simhash::kValueGroupMaxRadius);
            std::vector<uint32_t> blocks;
            for (uint64_t c : centers) blocks.push_back(static_cast<uint32_t>(simhash::block_value(c, layout, t)));
            Groups g(layout.width[t], blocks);
            for (uint32_t e = 0; e < library.size(); ++e) {
                const uint32_t value = static_cast<uint32_t>(simhash::block_value(library[e], layout, t));
                for (uint32_t c : gather(g.groups, value, rb)) {
                    if (simhash::popcount64(library[e] ^ centers[c]) > radius) continue;
                    bool earlier = false;
                    for (int u = 0; u < t; ++u)
                        earlier = earlier || simhash::popcount64(simhash::block_value(library[e], layout, u) ^
                                                                 simhash::block_value(centers[c], layout, u)) <=
                                                 simhash::block_probe_radius(radius, 3, u);
                    if (!earlier) found.emplace(c, e);
                }
            }
        }
        std::multiset<std::pair<uint32_t, uint32_t>> want;
        for (uint32_t c = 0; c < centers.size(); ++c)
            for (uint32_t e = 0; e < library.size(); ++e)
                if (simhash::popcount64(library[e] ^ centers[c]) <= radius) want.emplace(c, e);
        EXPECT_GT(want.size(), centers.size() / 10) << radius;  // not vacuous
        EXPECT_EQ(found, want) << "radius " << radius;
    }
}

}  // namespace
