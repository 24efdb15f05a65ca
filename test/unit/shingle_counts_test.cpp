// Distinct-shingle counting, set and log votes, exact Jaccard and containment.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "core/feature_hash.h"
#include "core/shingle_counts.h"
#include "core/simhash.h"

using simhash::ShingleCounts;
using simhash::ShingleOptions;
using simhash::ShingleUnit;
using simhash::ShingleWeighting;

namespace {

std::map<uint64_t, uint32_t> as_map(const ShingleCounts &counts) {
    std::map<uint64_t, uint32_t> m;
    counts.for_each([&](uint64_t h, uint32_t n) { m[h] = n; });
    return m;
}

std::vector<uint64_t> distinct(const std::string &text, const ShingleOptions &options = {}) {
    return simhash::count_shingles(text.data(), text.size(), options).sorted_hashes();
}

}  // namespace

TEST(ShingleCounts, CountsEveryDistinctHashAcrossGrowth) {
    ShingleCounts counts;
    std::map<uint64_t, uint32_t> expected;
    // 0 is the empty-slot marker; it must still be counted like any other hash.
    for (uint64_t i = 0; i < 50000; ++i) {
        const uint64_t h = (i % 20000) * 0x9E3779B97F4A7C15ull;
        counts.add(h);
        ++expected[h];
    }
    EXPECT_EQ(counts.distinct(), 20000u);
    EXPECT_EQ(as_map(counts), expected);
    const std::vector<uint64_t> sorted = counts.sorted_hashes();
    ASSERT_EQ(sorted.size(), 20000u);
    EXPECT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
    EXPECT_EQ(sorted.front(), 0u);
}

TEST(ShingleCounts, RefusesMoreDistinctShinglesThanItsCap) {
    ShingleCounts counts(0, 100);
    for (uint64_t i = 1; i <= 100; ++i) counts.add(i);
    for (uint64_t i = 1; i <= 100; ++i) counts.add(i);  // repeats are free
    EXPECT_THROW(counts.add(101), simhash::TooManyShingles);
}

TEST(ShingleCounts, CountShinglesMatchesTheShingles) {
    const std::string text = "to be or not to be that is the question to be";
    const ShingleOptions word2{ShingleUnit::kWord, 2};
    std::map<uint64_t, uint32_t> expected;
    for (const std::string &s : simhash::shingles(text.data(), text.size(), word2))
        ++expected[simhash::feature_hash(s.data(), s.size())];
    EXPECT_EQ(as_map(simhash::count_shingles(text.data(), text.size(), word2)), expected);
    EXPECT_EQ(expected[simhash::feature_hash("to be", 5)], 3u);
}

TEST(WeightedSimhash, SetVotesIgnoreRepeatsCountVotesDoNot) {
    const ShingleOptions word2{ShingleUnit::kWord, 2};
    const std::string once = "a b", many = "a b a b a b a b";  // shingles {a b, b a}
    const std::string both = "a b a";
    auto fp = [&](const std::string &t, ShingleWeighting w) { return simhash::simhash_text(t.data(), t.size(), word2, w); };
    EXPECT_EQ(fp(many, ShingleWeighting::kSet), fp(both, ShingleWeighting::kSet));
    EXPECT_NE(fp(many, ShingleWeighting::kCount), fp(both, ShingleWeighting::kCount));
    EXPECT_EQ(fp(once, ShingleWeighting::kSet), simhash::feature_hash("a b", 3));
}

TEST(WeightedSimhash, LogVotesAreOnePlusLnCount) {
    const ShingleOptions word2{ShingleUnit::kWord, 2};
    const std::string text = "to be or not to be that is the question to be";
    simhash::WeightedSimhashVote vote;
    for (const auto &[hash, n] : as_map(simhash::count_shingles(text.data(), text.size(), word2)))
        vote.add(hash, 1.0 + std::log(static_cast<double>(n)));
    EXPECT_EQ(simhash::simhash_text(text.data(), text.size(), word2, ShingleWeighting::kLog), vote.fingerprint());
}

TEST(WeightedSimhash, ParsesWeightingNames) {
    EXPECT_EQ(simhash::parse_shingle_weighting("set", 3), ShingleWeighting::kSet);
    EXPECT_EQ(simhash::parse_shingle_weighting("log", 3), ShingleWeighting::kLog);
    EXPECT_EQ(simhash::parse_shingle_weighting("count", 5), ShingleWeighting::kCount);
    EXPECT_THROW(simhash::parse_shingle_weighting("tf", 2), simhash::InvalidArgument);
    EXPECT_THROW(simhash::parse_shingle_weighting("sets", 4), simhash::InvalidArgument);
}

TEST(SetOverlap, JaccardAndContainment) {
    const ShingleOptions word1{ShingleUnit::kWord, 1};
    // {the, cat, sat, on, mat} and {the, cat, sat, on, a, mat}: 5 common of 6.
    simhash::SetOverlap o = simhash::set_overlap(distinct("the cat sat on the mat", word1),
                                                 distinct("the cat sat on a mat", word1));
    EXPECT_EQ(o.a, 5u);
    EXPECT_EQ(o.b, 6u);
    EXPECT_EQ(o.common, 5u);
    EXPECT_DOUBLE_EQ(o.jaccard(), 5.0 / 6.0);
    EXPECT_DOUBLE_EQ(o.containment(), 1.0);
    simhash::SetOverlap reverse = simhash::set_overlap(distinct("the cat sat on a mat", word1),
                                                       distinct("the cat sat on the mat", word1));
    EXPECT_DOUBLE_EQ(reverse.containment(), 5.0 / 6.0);
}

TEST(SetOverlap, EmptySets) {
    EXPECT_DOUBLE_EQ(simhash::set_overlap({}, {}).jaccard(), 1.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({}, {1, 2}).jaccard(), 0.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({}, {1, 2}).containment(), 1.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({1, 2}, {}).containment(), 0.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({}, {}).smaller_containment(), 1.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({}, {1, 2}).smaller_containment(), 0.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap({1, 2}, {}).smaller_containment(), 0.0);
}

TEST(SetOverlap, SmallerContainmentIsTheSameBothWays) {
    const ShingleOptions word1{ShingleUnit::kWord, 1};
    // {the, cat, sat} inside {the, cat, sat, on, a, mat}, and 2 of {the, dog, sat}.
    const auto quoted = distinct("the cat sat", word1);
    const auto page = distinct("the cat sat on a mat", word1);
    EXPECT_DOUBLE_EQ(simhash::set_overlap(quoted, page).smaller_containment(), 1.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap(page, quoted).smaller_containment(), 1.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap(page, quoted).jaccard(), 0.5);
    const auto other = distinct("the dog sat", word1);
    EXPECT_DOUBLE_EQ(simhash::set_overlap(page, other).smaller_containment(), 2.0 / 3.0);
    EXPECT_DOUBLE_EQ(simhash::set_overlap(other, page).smaller_containment(), 2.0 / 3.0);
}

TEST(SortedDistinctShingles, IntoABufferOfTheBound) {
    const ShingleOptions word1{ShingleUnit::kWord, 1};
    const ShingleOptions char1{ShingleUnit::kChar, 1};
    for (const std::string text : {"", " ", "a", "a a a", "the cat sat on the mat", "a b c d e f g", "\xe4\xb8\xad\xe6\x96\x87"}) {
        for (const ShingleOptions &options : {word1, char1}) {
            const std::vector<uint64_t> expected = distinct(text, options);
            std::vector<uint64_t> out(simhash::distinct_shingles_bound(text.size()), 0);
            ASSERT_GE(out.size(), expected.size()) << text;
            const size_t n = simhash::sorted_distinct_shingles(text.data(), text.size(), options, nullptr, out.data(),
                                                               out.size());
            out.resize(n);
            EXPECT_EQ(out, expected) << text;
        }
    }
    uint64_t one[1];
    EXPECT_THROW(simhash::sorted_distinct_shingles("a b", 3, word1, nullptr, one, 1), std::length_error);
}
