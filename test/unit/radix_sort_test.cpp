#include "core/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

// An item as a run's table 0 holds it: a key and a payload that must travel with it.
struct Item {
    uint64_t key;
    uint32_t payload;
};

uint64_t key_of(const Item &item) { return item.key; }

// Sorts by the top `bits` bits and checks: the order of those bits, and that the items are the
// ones given (each payload once, still with its key).
void check_sort(std::vector<Item> items, int bits) {
    std::vector<Item> given = items;
    simhash::radix_sort_top_bits(items.data(), items.size(), bits, key_of);
    const int drop = 64 - bits;
    for (size_t i = 1; i < items.size(); ++i)
        ASSERT_LE(items[i - 1].key >> drop, items[i].key >> drop) << "bits " << bits << " at " << i;
    std::vector<uint64_t> seen(given.size(), ~uint64_t{0});
    for (const Item &item : items) {
        ASSERT_LT(item.payload, given.size());
        ASSERT_EQ(seen[item.payload], ~uint64_t{0}) << "payload twice";
        seen[item.payload] = item.key;
    }
    for (size_t i = 0; i < given.size(); ++i) EXPECT_EQ(seen[i], given[i].key);
}

std::vector<Item> items_from(const std::vector<uint64_t> &keys) {
    std::vector<Item> items;
    for (uint32_t i = 0; i < keys.size(); ++i) items.push_back({keys[i], i});
    return items;
}

TEST(RadixSort, UniformKeysAtTheWidthsRunsUse) {
    std::mt19937_64 rng(7);
    for (size_t n : {0, 1, 2, 47, 48, 49, 1000, 200000}) {
        std::vector<uint64_t> keys(n);
        for (auto &k : keys) k = rng();
        for (int bits : {1, 8, 11, 12, 16, 21, 22, 32, 64}) check_sort(items_from(keys), bits);
    }
}

TEST(RadixSort, SkewedAndRepeatedKeys) {
    std::mt19937_64 rng(11);
    std::vector<uint64_t> keys(100000);
    // The low 12 bits constant, a few values repeated many times, and all-equal runs.
    for (size_t i = 0; i < keys.size(); ++i)
        keys[i] = i % 3 == 0 ? 0x123456789abcdef0ULL : i % 5 == 0 ? ~uint64_t{0} : (rng() & ~uint64_t{4095});
    for (int bits : {16, 21, 22, 52, 64}) check_sort(items_from(keys), bits);
    check_sort(items_from(std::vector<uint64_t>(5000, 42)), 22);
}

TEST(RadixSort, SortedAndReversedInput) {
    std::vector<uint64_t> keys(70000);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = (uint64_t{i} * 0x9E3779B97F4A7C15ULL);
    std::sort(keys.begin(), keys.end());
    check_sort(items_from(keys), 22);
    std::reverse(keys.begin(), keys.end());
    check_sort(items_from(keys), 22);
}

TEST(RadixSort, PlainIntegers) {
    // The refs of a run: uint64 values sorted by their own top bits.
    std::mt19937_64 rng(3);
    std::vector<uint64_t> refs(50000);
    for (auto &r : refs) r = rng();
    std::vector<uint64_t> expected = refs;
    simhash::radix_sort_top_bits(refs.data(), refs.size(), 64, [](uint64_t v) { return v; });
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(refs, expected);
}

}  // namespace
