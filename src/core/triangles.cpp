#include "core/triangles.h"

#include <algorithm>

#include "core/blocks.h"

namespace simhash {

namespace {

constexpr int kMaxTriangleBits = 64;

// For each count e of differing bits within one triangle (blocks b, b + 1, b + 2), the largest
// smallest-pair share they can leave: e less the least its largest block can take.
void pair_shares(int b, int shares[kMaxTriangleBits + 1], int *most) {
    const BlockLayout layout = block_layout(kTriangleBlocks);
    const int w0 = layout.width[b], w1 = layout.width[b + 1], w2 = layout.width[b + 2];
    *most = w0 + w1 + w2;
    for (int e = 0; e <= *most; ++e) {
        int least_largest = kMaxTriangleBits + 1;
        for (int x = 0; x <= w0; ++x)
            for (int y = 0; y <= w1 && x + y <= e; ++y) {
                const int z = e - x - y;
                if (z <= w2) least_largest = std::min(least_largest, std::max({x, y, z}));
            }
        shares[e] = e - least_largest;
    }
}

}  // namespace

int triangle_table_radius(int r) {
    int first[kMaxTriangleBits + 1], second[kMaxTriangleBits + 1];
    int first_most, second_most;
    pair_shares(0, first, &first_most);
    pair_shares(3, second, &second_most);
    int radius = 0;
    for (int e = std::max(0, r - second_most); e <= std::min(r, first_most); ++e)
        radius = std::max(radius, std::min(first[e], second[r - e]));
    return radius;
}

}  // namespace simhash
