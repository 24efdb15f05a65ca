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

// A poll that never stops is asked about once every 2^18 items sorted, the sort unchanged; one
// that stops makes the sort throw Stopped before it has done the work.
TEST(RadixSort, PollIsAskedAndCanStop) {
    std::mt19937_64 rng(5);
    std::vector<uint64_t> refs(4000000);
    for (auto &r : refs) r = rng();
    std::vector<uint64_t> expected = refs;
    std::sort(expected.begin(), expected.end());
    struct Asked {
        uint64_t times = 0;
        uint64_t stop_at = ~uint64_t{0};
    };
    auto ask = [](void *context) {
        Asked *asked = static_cast<Asked *>(context);
        return ++asked->times >= asked->stop_at;
    };
    Asked never;
    simhash::StopPoll poll(ask, &never);
    std::vector<uint64_t> sorted = refs;
    simhash::radix_sort_top_bits(sorted.data(), sorted.size(), 64, [](uint64_t v) { return v; }, &poll);
    EXPECT_EQ(sorted, expected);
    // Each item is counted when the first pass counts the digits, then ticks once per swap that
    // moves it (about once per level: two of 11 bits for 4M items): about 3 x 4M / 2^18 = 45 asks.
    EXPECT_GE(never.times, 2 * refs.size() / simhash::StopPoll::kUnitsBetweenPolls);
    EXPECT_LE(never.times, 4 * refs.size() / simhash::StopPoll::kUnitsBetweenPolls);

    Asked soon;
    soon.stop_at = 3;
    simhash::StopPoll stopping(ask, &soon);
    sorted = refs;
    EXPECT_THROW(simhash::radix_sort_top_bits(sorted.data(), sorted.size(), 64, [](uint64_t v) { return v; }, &stopping),
                 simhash::Stopped);
    EXPECT_EQ(soon.times, 3u);

    // The first pass moves nearly every item while its first bucket fills: the poll is asked
    // during those swaps too, not only between buckets (a cancel would otherwise wait for the
    // whole pass, seconds at 300M entries). Some ask finds between a tenth and nine tenths of the
    // items in their first-pass buckets.
    struct Progress {
        const std::vector<uint64_t> *items;
        std::vector<size_t> bucket_end;  // by top 11 bits
        bool seen_midway = false;
    };
    Progress progress{&sorted, std::vector<size_t>(2048, 0)};
    for (uint64_t r : refs) ++progress.bucket_end[r >> 53];
    for (size_t d = 1; d < 2048; ++d) progress.bucket_end[d] += progress.bucket_end[d - 1];
    auto watch = [](void *context) {
        Progress *p = static_cast<Progress *>(context);
        size_t placed = 0;
        for (size_t i = 0; i < p->items->size(); ++i) {
            const size_t d = (*p->items)[i] >> 53;
            placed += i < p->bucket_end[d] && (d == 0 || i >= p->bucket_end[d - 1]);
        }
        const double share = static_cast<double>(placed) / static_cast<double>(p->items->size());
        p->seen_midway = p->seen_midway || (share > 0.1 && share < 0.9);
        return false;
    };
    sorted = refs;
    simhash::StopPoll watching(watch, &progress);
    simhash::radix_sort_top_bits(sorted.data(), sorted.size(), 64, [](uint64_t v) { return v; }, &watching);
    EXPECT_EQ(sorted, expected);
    EXPECT_TRUE(progress.seen_midway);
}

}  // namespace
