#include "core/triangles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/blocks.h"

namespace {

TEST(Triangles, PairsAreTheTwoTrianglesOfSixBlocks) {
    for (int t = 0; t < simhash::kTriangleTables; ++t) {
        const simhash::BlockPair p = simhash::kTrianglePairs[t];
        EXPECT_LT(p.first, p.second);
        EXPECT_EQ(p.first / 3, p.second / 3) << "table " << t << " joins blocks of one triangle";
    }
}

TEST(Triangles, KnownRadii) {
    EXPECT_EQ(simhash::triangle_table_radius(0), 0);
    EXPECT_EQ(simhash::triangle_table_radius(3), 0);  // six exact probes
    EXPECT_EQ(simhash::triangle_table_radius(4), 1);
    EXPECT_EQ(simhash::triangle_table_radius(7), 2);
    EXPECT_EQ(simhash::triangle_table_radius(10), 3);
    // 64 bits differ: each pair differs in all its bits, 20 for the shortest pair.
    EXPECT_EQ(simhash::triangle_table_radius(64), 20);
}

// Every way of spreading r differing bits over the six blocks (each within its width): some table's
// pair differs in at most triangle_table_radius(r) bits (every fingerprint within r is found), and
// some spread leaves no pair under it (the radius is the least that finds them all).
TEST(Triangles, RadiusIsTheLeastThatReachesEverySpread) {
    const simhash::BlockLayout layout = simhash::block_layout(simhash::kTriangleBlocks);
    std::vector<int> worst(65, -1);
    int e[simhash::kTriangleBlocks];
    for (e[0] = 0; e[0] <= layout.width[0]; ++e[0])
        for (e[1] = 0; e[1] <= layout.width[1]; ++e[1])
            for (e[2] = 0; e[2] <= layout.width[2]; ++e[2])
                for (e[3] = 0; e[3] <= layout.width[3]; ++e[3])
                    for (e[4] = 0; e[4] <= layout.width[4]; ++e[4])
                        for (e[5] = 0; e[5] <= layout.width[5]; ++e[5]) {
                            int smallest = 64;
                            for (const simhash::BlockPair &p : simhash::kTrianglePairs)
                                smallest = std::min(smallest, e[p.first] + e[p.second]);
                            const int r = e[0] + e[1] + e[2] + e[3] + e[4] + e[5];
                            worst[r] = std::max(worst[r], smallest);
                        }
    for (int r = 0; r <= 64; ++r) EXPECT_EQ(simhash::triangle_table_radius(r), worst[r]) << "radius " << r;
}

}  // namespace
