#include "core/run_tiers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

const simhash::RunTierPolicy kPolicy{1000, 4, 24};

std::vector<int> choose(const std::vector<uint64_t> &sizes) {
    std::vector<int> chosen(kPolicy.fanout);
    chosen.resize(simhash::choose_runs_to_merge(sizes.data(), sizes.size(), kPolicy, chosen.data()));
    return chosen;
}

TEST(RunTiers, TierBoundaries) {
    EXPECT_EQ(simhash::run_tier(0, kPolicy), 0);
    EXPECT_EQ(simhash::run_tier(1000, kPolicy), 0);
    EXPECT_EQ(simhash::run_tier(1001, kPolicy), 1);
    EXPECT_EQ(simhash::run_tier(4000, kPolicy), 1);
    EXPECT_EQ(simhash::run_tier(4001, kPolicy), 2);
    EXPECT_EQ(simhash::run_tier(UINT64_MAX, kPolicy), 28);  // 1000 * 4^28 > 2^64 > 1000 * 4^27: no overflow
}

TEST(RunTiers, NothingToMergeBelowFanout) {
    EXPECT_TRUE(choose({}).empty());
    EXPECT_TRUE(choose({500}).empty());
    EXPECT_TRUE(choose({10000000, 900, 950, 1000}).empty());  // three in tier 0
}

TEST(RunTiers, MergesTheLowestFullTierOnly) {
    // Tier 0 holds four runs (indexes 1..4), tier 1 four as well: tier 0 goes first.
    const std::vector<uint64_t> sizes{3000, 900, 3500, 1000, 800, 2000, 950, 2500};
    std::vector<int> chosen = choose(sizes);
    std::sort(chosen.begin(), chosen.end());
    EXPECT_EQ(chosen, (std::vector<int>{1, 3, 4, 6}));
}

TEST(RunTiers, TheLargestRunWaitsForItsPeers) {
    // A 10M-entry build plus three tier-4 runs: nothing; a fourth tier-4 run does not pull in the
    // big one either.
    EXPECT_TRUE(choose({10000000, 200000, 150000, 100000}).empty());
    std::vector<int> chosen = choose({10000000, 200000, 150000, 100000, 120000});
    std::sort(chosen.begin(), chosen.end());
    EXPECT_EQ(chosen, (std::vector<int>{1, 2, 3, 4}));
}

TEST(RunTiers, TooManyRunsMergesTheSmallest) {
    // Uneven sizes (one per tier) beyond max_runs: the four smallest.
    std::vector<uint64_t> sizes;
    for (int tier = 0; tier < 25; ++tier) sizes.push_back(1000ull << (2 * tier));
    std::vector<int> chosen = choose(sizes);
    EXPECT_EQ(chosen, (std::vector<int>{0, 1, 2, 3}));
}

// Simulates a growing index: every pending list written out adds a tier-0 run, then the policy
// merges until satisfied. Counts how often each entry is rewritten and the most runs ever live.
TEST(RunTiers, SteadyIngestRewritesLogarithmicallyAndBoundsRuns) {
    for (const uint64_t total : {uint64_t{100000}, uint64_t{1000000}, uint64_t{10000000}}) {
        std::vector<uint64_t> runs;
        uint64_t written = 0;
        size_t most_runs = 0;
        for (uint64_t inserted = 0; inserted < total; inserted += kPolicy.base) {
            runs.push_back(kPolicy.base);
            written += kPolicy.base;
            for (;;) {
                std::vector<int> chosen(kPolicy.fanout);
                const int k = simhash::choose_runs_to_merge(runs.data(), runs.size(), kPolicy, chosen.data());
                if (k == 0) break;
                uint64_t merged = 0;
                std::sort(chosen.begin(), chosen.begin() + k, std::greater<int>());
                for (int i = 0; i < k; ++i) {
                    merged += runs[chosen[i]];
                    runs.erase(runs.begin() + chosen[i]);
                }
                runs.push_back(merged);
                written += merged;
            }
            most_runs = std::max(most_runs, runs.size());
        }
        const double rewrites = static_cast<double>(written) / total;
        // log4(N / base) + 1 writes per entry, at most 3 runs per tier.
        int tiers = simhash::run_tier(total, kPolicy);
        EXPECT_LE(rewrites, tiers + 1.0) << total;
        EXPECT_LE(most_runs, static_cast<size_t>(3 * tiers + 1)) << total;
    }
}

}  // namespace
