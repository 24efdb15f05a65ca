#include "core/blocks.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

TEST(Blocks, LayoutCoversEveryBitOnceTopFirst) {
    for (int count = 1; count <= 64; ++count) {
        const simhash::BlockLayout layout = simhash::block_layout(count);
        uint64_t covered = 0;
        int total = 0;
        for (int i = 0; i < count; ++i) {
            EXPECT_GE(layout.width[i], 64 / count);
            EXPECT_LE(layout.width[i], 64 / count + 1);
            if (i > 0) EXPECT_LE(layout.width[i], layout.width[i - 1]);  // the longer blocks first
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

}  // namespace
