// Batch near-duplicate joins against brute force: pairs, groups, partitioned passes, MinHash LSH.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/hamming.h"
#include "core/minhash.h"
#include "core/near_pairs.h"
#include "near_test_rows.h"

namespace simhash {
namespace {

using near_test::Triple;
using near_test::brute_force;
using near_test::make_rows;
using near_test::reference_connected;

bool collect(void *context, const NearPair *pairs, size_t n) {
    auto *out = static_cast<std::vector<Triple> *>(context);
    for (size_t i = 0; i < n; ++i) out->emplace_back(pairs[i].a, pairs[i].b, pairs[i].distance);
    return true;
}

// Pairs of near_pairs() with the cheapest plan (plan == nullptr) or a given one, sorted.
// A control that appends every emitted pair to *out.
RunControl collecting(std::vector<Triple> *out) {
    RunControl control;
    control.context = out;
    control.emit = collect;
    return control;
}

std::vector<Triple> run_with(std::vector<IdFingerprint> rows, int radius, const NearPairsPlan *plan) {
    std::vector<Triple> out;
    const RunControl control = collecting(&out);
    const RunStatus status = plan ? near_pairs(rows.data(), rows.size(), *plan, control)
                                  : near_pairs(rows.data(), rows.size(), radius, control);
    EXPECT_EQ(status, RunStatus::done);
    std::sort(out.begin(), out.end());
    return out;
}
std::vector<Triple> run(const std::vector<IdFingerprint> &rows, int radius) { return run_with(rows, radius, nullptr); }
std::vector<Triple> run_plan(const std::vector<IdFingerprint> &rows, const NearPairsPlan &plan) {
    return run_with(rows, plan.radius, &plan);
}

std::vector<Triple> within(const std::vector<Triple> &all, int radius) {
    std::vector<Triple> out;
    for (const auto &t : all)
        if (std::get<2>(t) <= radius) out.push_back(t);
    return out;
}

TEST(NearPairs, MatchesBruteForceRadii0To16) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{37}, size_t{600}, size_t{5000}, size_t{20000}}) {
        const auto rows = make_rows(n, n * 7 + 1);
        const auto all = brute_force(rows, 16);
        for (int r = 0; r <= 16; ++r) {
            if (n == 20000 && r % 4 != 3 && r != 0 && r != 16) continue;  // keep the test fast
            EXPECT_EQ(run(rows, r), within(all, r)) << "n=" << n << " r=" << r;
        }
    }
}

TEST(NearPairs, EveryBlockLayoutIsExact) {
    const auto rows = make_rows(800, 99);
    const auto all = brute_force(rows, 20);
    for (int r : {1, 2, 3, 5, 8, 13, 20})
        for (int t = 1; r + t <= 64 && t <= 6; ++t) {
            if (r + t > 24 && t > 1) continue;  // C(m, t) grows large
            EXPECT_EQ(run_plan(rows, plan_with_blocks(r, r + t, t)), within(all, r)) << "r=" << r << " t=" << t;
        }
    // The extreme layouts: 64 one-bit blocks.
    EXPECT_EQ(run_plan(rows, plan_with_blocks(63, 64, 1)), brute_force(rows, 63));
    EXPECT_EQ(run_plan(rows, plan_with_blocks(62, 64, 2)), brute_force(rows, 62));
}

TEST(NearPairs, LargeRadiiFallBackAndStayExact) {
    const auto rows = make_rows(300, 5);
    for (int r : {24, 32, 40, 63, 64}) EXPECT_EQ(run(rows, r), brute_force(rows, r)) << r;
    EXPECT_TRUE(plan_near_pairs(300, 40).brute_force);
    EXPECT_EQ(run(rows, 64).size(), 300u * 299 / 2);
}

TEST(NearPairs, ManyDuplicatesDoNotBlowUp) {
    // 2000 copies of one fingerprint, 1500 of another 2 bits away, plus noise.
    std::vector<IdFingerprint> rows;
    for (int i = 0; i < 2000; ++i) rows.push_back({i, 0xABCDEF0123456789ull});
    for (int i = 0; i < 1500; ++i) rows.push_back({10000 + i, 0xABCDEF0123456789ull ^ 0x8001});
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) rows.push_back({20000 + i, rng()});
    const auto out = run(rows, 3);
    size_t zero = 0, two = 0;
    for (const auto &t : out) (std::get<2>(t) == 0 ? zero : two) += 1;
    EXPECT_EQ(zero, 2000u * 1999 / 2 + 1500u * 1499 / 2);
    EXPECT_EQ(two, 2000u * 1500);
    std::set<std::pair<int64_t, int64_t>> unique;
    for (const auto &t : out) unique.emplace(std::get<0>(t), std::get<1>(t));
    EXPECT_EQ(unique.size(), out.size());
}

TEST(NearPairs, SkewedFingerprintsAreExact) {
    // Small integers and values near 2^64: equal high blocks, and every lookup far from the
    // position a uniform fingerprint would have.
    std::vector<IdFingerprint> rows;
    for (int i = 0; i < 3000; ++i) rows.push_back({i, static_cast<uint64_t>(i) * 3});
    for (int i = 0; i < 3000; ++i) rows.push_back({5000 + i, ~uint64_t{0} - static_cast<uint64_t>(i) * 5});
    const auto all = brute_force(rows, 6);
    for (int r : {0, 1, 3, 6}) EXPECT_EQ(run(rows, r), within(all, r)) << r;
}

TEST(NearPairs, CombinationsAreEveryTSubsetOnce) {
    for (int r : {1, 3, 10}) {
        for (int t = 1; t <= 4; ++t) {
            const auto plan = plan_with_blocks(r, r + t, t);
            std::set<uint64_t> masks;
            for (size_t c = 0; c < plan.tables; ++c) {
                const uint64_t mask = combination_mask(plan, c);
                EXPECT_EQ(__builtin_popcountll(mask), t);
                EXPECT_LT(mask, uint64_t{1} << (r + t));
                masks.insert(mask);
            }
            EXPECT_EQ(masks.size(), plan.tables);
        }
    }
    EXPECT_EQ(plan_with_blocks(62, 64, 2).tables, 2016u);
    EXPECT_EQ(combination_mask(plan_with_blocks(62, 64, 2), 2015), uint64_t{3} << 62);
}

TEST(NearPairs, PlanChoosesTablesForLargeInputs) {
    const auto plan = plan_near_pairs(10000000, 3);
    EXPECT_FALSE(plan.brute_force);
    EXPECT_EQ(plan.blocks, 3 + plan.key_blocks);
    EXPECT_GE(plan.key_blocks, 2);
    EXPECT_TRUE(plan_near_pairs(10, 3).brute_force);
    EXPECT_THROW(plan_near_pairs(10, 65), std::invalid_argument);
    EXPECT_THROW(plan_near_pairs(10, -1), std::invalid_argument);
}

TEST(NearPairs, TableLayoutsForPartitionedInputs) {
    // Comparing all pairs is cheaper for 2000 fingerprints at radius 15, but a caller that
    // partitions by table keys gets the cheapest layout with at most 16 tables: 16 blocks, 1 key block.
    EXPECT_TRUE(plan_near_pairs(2000, 15, 16).brute_force);
    const auto plan = plan_table_layout(2000, 15, 16);
    ASSERT_FALSE(plan.brute_force);
    EXPECT_EQ(plan.tables, 16u);
    EXPECT_EQ(plan.key_blocks, 1);
    // Radius 16 needs 17 tables at least.
    EXPECT_TRUE(plan_table_layout(2000, 16, 16).brute_force);
    EXPECT_FALSE(plan_table_layout(2000, 16, 17).brute_force);
    // Where tables are cheaper anyway, both choose the same plan.
    EXPECT_EQ(plan_table_layout(10000000, 3, 16).tables, plan_near_pairs(10000000, 3, 16).tables);
    // Passes of a layout chosen over brute force stay exact.
    const auto rows = make_rows(2000, 43);
    EXPECT_EQ(run_plan(rows, plan), brute_force(rows, 15));
}

TEST(NearPairs, PartitionedPassesCoverEveryPairOnce) {
    const auto rows = make_rows(3000, 11);
    for (int r : {0, 3, 7}) {
        const auto plan = plan_with_blocks(r, r + 2, 2);
        std::vector<Triple> out;
        const RunControl control = collecting(&out);
        for (size_t c = 0; c < plan.tables; ++c) {
            const int bits = combination_key_bits(plan, c);
            // Four key ranges by the top two key bits.
            for (uint64_t part = 0; part < 4; ++part) {
                std::vector<IdFingerprint> subset;
                for (const auto &row : rows)
                    if ((combination_key(plan, c, row.fingerprint) >> (bits - 2)) == part) subset.push_back(row);
                ASSERT_EQ(near_pairs_pass(subset.data(), subset.size(), plan, c, control), RunStatus::done);
            }
        }
        std::sort(out.begin(), out.end());
        EXPECT_EQ(out, brute_force(rows, r)) << r;
    }
}

TEST(NearPairs, ConnectivityOnlyKeepsComponentsWithLinearDuplicates) {
    auto rows = make_rows(3000, 23);
    for (int i = 0; i < 500; ++i) rows.push_back({50000 + i, rows[0].fingerprint});  // one big duplicate group
    for (int r : {0, 3, 6}) {
        const auto plan = plan_with_blocks(r, r + 2, 2);
        std::vector<Triple> out;
        RunControl control = collecting(&out);
        control.connectivity_only = true;
        for (size_t c = 0; c < plan.tables; ++c) {
            auto copy = rows;
            ASSERT_EQ(near_pairs_pass(copy.data(), copy.size(), plan, c, control), RunStatus::done);
        }
        // Components of the emitted pairs equal the reference components.
        std::map<int64_t, int64_t> parent;
        for (const auto &row : rows) parent[row.id] = row.id;
        std::function<int64_t(int64_t)> find = [&](int64_t x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
        for (const auto &t : out) {
            EXPECT_LE(std::get<2>(t), r);
            const int64_t a = find(std::get<0>(t)), b = find(std::get<1>(t));
            parent[std::max(a, b)] = std::min(a, b);
        }
        std::map<int64_t, int64_t> group;
        for (const auto &row : rows) group[row.id] = find(row.id);
        EXPECT_EQ(group, reference_connected(rows, r)) << r;
        EXPECT_LT(out.size(), rows.size() * 2) << "pairs stay linear for duplicates";
    }
}

TEST(NearPairs, StopsWhenAsked) {
    auto rows = make_rows(20000, 17);
    int polls = 0, reports = 0;
    struct Context {
        int *polls, *reports;
    } context{&polls, &reports};
    RunControl control;
    control.context = &context;
    control.should_stop = [](void *c) { return ++*static_cast<Context *>(c)->polls > 2; };
    control.progress = [](void *c, const char *, uint64_t, uint64_t) {
        ++*static_cast<Context *>(c)->reports;
        return true;
    };
    EXPECT_EQ(near_pairs(rows.data(), rows.size(), 5, control), RunStatus::stopped);
    EXPECT_EQ(polls, 3);
    EXPECT_GE(reports, 1);
    EXPECT_THROW(near_pairs(rows.data(), rows.size(), 65, control), std::invalid_argument);
}

TEST(NearPairs, FindsRepeatedIds) {
    int64_t repeated = 0;
    // Serial ids (a bitmap over their range) and sparse ones (a sorted copy), small and large.
    for (size_t n : {size_t{2}, size_t{100}, size_t{5000}}) {
        for (int64_t stride : {int64_t{1}, int64_t{1000003}}) {
            std::vector<int64_t> ids(n);
            for (size_t i = 0; i < n; ++i) ids[i] = -7 + static_cast<int64_t>(i) * stride;
            std::shuffle(ids.begin(), ids.end(), std::mt19937_64(n));
            EXPECT_FALSE(find_repeated_id(ids.data(), n, &repeated)) << n << " " << stride;
            const int64_t twice = ids[0];
            ids[n - 1] = twice;
            ASSERT_TRUE(find_repeated_id(ids.data(), n, &repeated)) << n << " " << stride;
            EXPECT_EQ(repeated, twice) << n << " " << stride;
        }
    }
    // The whole int64 range, and rows of (id, fingerprint).
    std::vector<int64_t> extremes = {INT64_MIN, INT64_MAX, 0, -1, 1};
    EXPECT_FALSE(find_repeated_id(extremes.data(), extremes.size(), &repeated));
    extremes.push_back(INT64_MIN);
    ASSERT_TRUE(find_repeated_id(extremes.data(), extremes.size(), &repeated));
    EXPECT_EQ(repeated, INT64_MIN);
    auto rows = make_rows(3000, 29);
    EXPECT_FALSE(find_repeated_id(rows.data(), rows.size(), &repeated));
    rows.push_back({rows[17].id, rows[17].fingerprint ^ 1});
    ASSERT_TRUE(find_repeated_id(rows.data(), rows.size(), &repeated));
    EXPECT_EQ(repeated, rows[17].id);
    EXPECT_FALSE(find_repeated_id(rows.data(), 0, &repeated));
    EXPECT_FALSE(find_repeated_id(rows.data(), 1, &repeated));
}

TEST(NearPairs, ChancePairFractionIsTheBinomialTail) {
    EXPECT_EQ(chance_pair_fraction(64), 1.0);
    EXPECT_EQ(chance_pair_fraction(0), std::ldexp(1.0, -64));
    EXPECT_EQ(chance_pair_fraction(3), std::ldexp(1.0 + 64 + 2016 + 41664, -64));
    // Symmetry of the binomial: P(d <= 31) + P(d <= 32) = P(d <= 31) + P(d >= 32) = 1.
    EXPECT_NEAR(chance_pair_fraction(31) + chance_pair_fraction(32), 1.0, 1e-12);
    // Uniform fingerprints: the pairs found match the fraction (radius 24 on 3000 rows, ~5 pairs per 1000).
    std::mt19937_64 rng(41);
    std::vector<IdFingerprint> rows(3000);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = {static_cast<int64_t>(i), rng()};
    const double expected = chance_pair_fraction(24) * 3000.0 * 2999 / 2;
    const double found = static_cast<double>(run(rows, 24).size());
    EXPECT_NEAR(found, expected, 4 * std::sqrt(expected)) << expected;
    EXPECT_THROW(chance_pair_fraction(65), std::invalid_argument);
}

// Groups -------------------------------------------------------------------------------------

std::map<int64_t, int64_t> reference_leader(std::vector<IdFingerprint> rows, int radius) {
    std::sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.id < b.id; });
    std::map<int64_t, int64_t> group;
    for (const auto &leader : rows) {
        if (group.count(leader.id)) continue;
        for (const auto &r : rows)
            if (!group.count(r.id) && hamming_distance(r.fingerprint, leader.fingerprint) <= radius) group[r.id] = leader.id;
    }
    return group;
}

std::map<int64_t, int64_t> run_groups(const std::vector<IdFingerprint> &rows, int radius, GroupMethod method) {
    std::vector<int64_t> group(rows.size());
    EXPECT_EQ(near_groups(rows.data(), rows.size(), radius, method, group.data(), RunControl{}), RunStatus::done);
    std::map<int64_t, int64_t> out;
    for (size_t i = 0; i < rows.size(); ++i) out[rows[i].id] = group[i];
    return out;
}

TEST(NearGroups, ConnectedAndLeaderMatchReferences) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{500}, size_t{3000}}) {
        const auto rows = make_rows(n, n + 3);
        for (int r : {0, 3, 8, 12}) {
            EXPECT_EQ(run_groups(rows, r, GroupMethod::connected), reference_connected(rows, r)) << n << " " << r;
            EXPECT_EQ(run_groups(rows, r, GroupMethod::leader), reference_leader(rows, r)) << n << " " << r;
        }
    }
}

// Every int64 is a possible id, the smallest included: it leads its group like any other.
TEST(NearGroups, TheSmallestPossibleIdLeads) {
    const int64_t smallest = std::numeric_limits<int64_t>::min();
    const std::vector<IdFingerprint> claimed = {{smallest, 0}, {1, 1}, {2, 2}};
    EXPECT_EQ(run_groups(claimed, 1, GroupMethod::leader), reference_leader(claimed, 1));
    EXPECT_EQ(run_groups(claimed, 1, GroupMethod::leader).at(2), smallest);
    const std::vector<IdFingerprint> apart = {{smallest, 0}, {1, 1}, {2, 3}};
    EXPECT_EQ(run_groups(apart, 1, GroupMethod::leader), reference_leader(apart, 1));
    EXPECT_EQ(run_groups(apart, 1, GroupMethod::connected), reference_connected(apart, 1));
    auto rows = make_rows(500, 7);
    rows[0].id = smallest;
    rows[1].id = std::numeric_limits<int64_t>::max();
    for (int r : {3, 12}) EXPECT_EQ(run_groups(rows, r, GroupMethod::leader), reference_leader(rows, r)) << r;
}

TEST(NearGroups, LeaderCountsItsPairsAgainstTheMemoryLimit) {
    const auto rows = make_rows(2000, 31);
    const auto reference = reference_leader(rows, 12);
    // The pairs a leader run keeps: pairs of distinct fingerprints within the radius.
    std::set<std::pair<uint64_t, uint64_t>> distinct_pairs;
    for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = 0; j < rows.size(); ++j)
            if (rows[i].fingerprint < rows[j].fingerprint && hamming_distance(rows[i].fingerprint, rows[j].fingerprint) <= 12)
                distinct_pairs.emplace(rows[i].fingerprint, rows[j].fingerprint);
    const size_t needed = leader_groups_memory(rows.size(), distinct_pairs.size());
    EXPECT_EQ(needed, rows.size() * kBytesPerRowLeaderGroups + distinct_pairs.size() * kBytesPerLeaderPair);
    std::vector<int64_t> group(rows.size(), -1);
    size_t reported = 0;
    EXPECT_EQ(near_groups(rows.data(), rows.size(), 12, GroupMethod::leader, group.data(), RunControl{}, needed - 1,
                          &reported),
              RunStatus::over_memory_limit);
    EXPECT_EQ(reported, needed);
    EXPECT_EQ(group, std::vector<int64_t>(rows.size(), -1)) << "nothing written when refused";
    ASSERT_EQ(near_groups(rows.data(), rows.size(), 12, GroupMethod::leader, group.data(), RunControl{}, needed),
              RunStatus::done);
    std::map<int64_t, int64_t> out;
    for (size_t i = 0; i < rows.size(); ++i) out[rows[i].id] = group[i];
    EXPECT_EQ(out, reference);
    // Connected groups keep no pairs: the limit does not apply.
    EXPECT_EQ(near_groups(rows.data(), rows.size(), 12, GroupMethod::connected, group.data(), RunControl{}, 1),
              RunStatus::done);
    // Radius 64 keeps every pair of distinct fingerprints, 4 bytes each.
    const auto all = make_rows(300, 37);
    std::set<uint64_t> fps;
    for (const auto &r : all) fps.insert(r.fingerprint);
    EXPECT_EQ(near_groups(all.data(), all.size(), 64, GroupMethod::leader, group.data(), RunControl{}, 0, &reported),
              RunStatus::over_memory_limit);
    const size_t all_pairs = fps.size() * (fps.size() - 1) / 2;
    EXPECT_EQ(reported, leader_groups_memory(all.size(), all_pairs));
    // The pairs are listed from one enumeration when the limit leaves 12 bytes a pair, else from
    // a second one (also after keeping some of them): the same groups either way.
    std::vector<int64_t> unlimited(all.size()), limited(all.size());
    ASSERT_EQ(near_groups(all.data(), all.size(), 64, GroupMethod::leader, unlimited.data(), RunControl{}), RunStatus::done);
    for (size_t extra : {size_t{0}, 4 * all_pairs, 8 * all_pairs + 4096 * 8}) {
        std::fill(limited.begin(), limited.end(), -1);
        EXPECT_EQ(near_groups(all.data(), all.size(), 64, GroupMethod::leader, limited.data(), RunControl{},
                              reported + extra),
                  RunStatus::done);
        EXPECT_EQ(limited, unlimited) << extra;
    }
}

TEST(NearGroups, LeaderRefusesAsSoonAsItsPairsCannotFit) {
    // Phases a run reports: a refusal at radius 64 comes before any pair is enumerated.
    std::vector<std::string> phases;
    RunControl control;
    control.context = &phases;
    control.progress = [](void *c, const char *phase, uint64_t, uint64_t) {
        static_cast<std::vector<std::string> *>(c)->push_back(phase);
        return true;
    };
    const auto rows = make_rows(2000, 41);
    std::vector<int64_t> group(rows.size(), -1);
    size_t reported = 0;
    bool exact = false;
    std::set<uint64_t> distinct;
    for (const auto &r : rows) distinct.insert(r.fingerprint);
    const uint64_t all_pairs = uint64_t{distinct.size()} * (distinct.size() - 1) / 2;
    EXPECT_EQ(near_groups(rows.data(), rows.size(), 64, GroupMethod::leader, group.data(), control,
                          leader_groups_memory(rows.size(), all_pairs) - 1, &reported, &exact),
              RunStatus::over_memory_limit);
    EXPECT_EQ(reported, leader_groups_memory(rows.size(), all_pairs));
    EXPECT_TRUE(exact);
    for (const auto &phase : phases) EXPECT_EQ(phase.find("compar"), std::string::npos) << phase;
    for (const auto &phase : phases) EXPECT_EQ(phase.find("permuted"), std::string::npos) << phase;
    // Below 64 the enumeration stops at the first pair past the limit: room for 10 pairs, 11 counted.
    const size_t fixed = leader_groups_memory(rows.size(), 0);
    EXPECT_EQ(near_groups(rows.data(), rows.size(), 24, GroupMethod::leader, group.data(), RunControl{},
                          fixed + 10 * kBytesPerLeaderPair + 3, &reported, &exact),
              RunStatus::over_memory_limit);
    EXPECT_EQ(reported, leader_groups_memory(rows.size(), 11));
    EXPECT_FALSE(exact);
    // Not even the rows fit: refused before anything is compared.
    EXPECT_EQ(near_groups(rows.data(), rows.size(), 3, GroupMethod::leader, group.data(), RunControl{}, fixed - 1,
                          &reported, &exact),
              RunStatus::over_memory_limit);
    EXPECT_EQ(reported, fixed);
    EXPECT_FALSE(exact);
    EXPECT_EQ(group, std::vector<int64_t>(rows.size(), -1)) << "nothing written when refused";
}

TEST(NearGroups, LeaderMembersAreWithinRadiusOfTheirLeader) {
    // A chain 0 - 3 bits - 6 bits: connected joins all, leader splits.
    std::vector<IdFingerprint> rows = {{1, 0}, {2, 0x7}, {3, 0x3F}};
    auto connected = run_groups(rows, 3, GroupMethod::connected);
    auto leader = run_groups(rows, 3, GroupMethod::leader);
    EXPECT_EQ(connected[3], 1);
    EXPECT_EQ(leader[2], 1);
    EXPECT_EQ(leader[3], 3);
}

// MinHash LSH ----------------------------------------------------------------------------------

TEST(MinhashLsh, ParametersFollowTheThreshold) {
    const auto p = lsh_parameters(0.8, 128);
    EXPECT_LE(p.bands * p.rows, 128);
    // The S-curve's steepest point (1/b)^(1/r) lies near the threshold.
    const double knee = std::pow(1.0 / p.bands, 1.0 / p.rows);
    EXPECT_NEAR(knee, 0.8, 0.12);
    EXPECT_GT(lsh_candidate_probability(0.95, p.bands, p.rows), 0.99);
    EXPECT_LT(lsh_candidate_probability(0.3, p.bands, p.rows), 0.01);
    const auto low = lsh_parameters(0.3, 128);
    EXPECT_GT(low.bands, p.bands);
    EXPECT_THROW(lsh_parameters(0.0, 128), std::invalid_argument);
}

TEST(MinhashLsh, ParameterSearchStopsWhenAsked) {
    // The longest signatures take the longest search: a poll that says stop ends it, one that
    // never does is asked along the way and changes nothing.
    StopPoll stop([](void *) { return true; }, nullptr);
    EXPECT_THROW(lsh_parameters(0.8, 8192, 0.5, 0.5, &stop), Stopped);
    int asked = 0;
    StopPoll count([](void *context) { ++*static_cast<int *>(context); return false; }, &asked);
    const auto polled = lsh_parameters(0.8, 1024, 0.5, 0.5, &count);
    const auto plain = lsh_parameters(0.8, 1024);
    EXPECT_GT(asked, 0);
    EXPECT_EQ(polled.bands, plain.bands);
    EXPECT_EQ(polled.rows, plain.rows);
}

bool collect_jaccard(void *context, const JaccardPair *pairs, size_t n) {
    auto *out = static_cast<std::vector<JaccardPair> *>(context);
    out->insert(out->end(), pairs, pairs + n);
    return true;
}

TEST(MinhashLsh, FindsPlantedPairsOnceAndVerifiesThem) {
    const int slots = 128;
    MinhashFamily family(slots, 0);
    std::mt19937_64 rng(8);
    std::vector<int64_t> ids;
    std::vector<uint32_t> signatures;
    std::set<std::pair<int64_t, int64_t>> planted;
    auto add = [&](int64_t id, const std::vector<uint64_t> &features) {
        MinhashSketch sketch(family);
        for (auto f : features) sketch.add(f);
        const auto sig = sketch.signature();
        ids.push_back(id);
        signatures.insert(signatures.end(), sig.begin(), sig.end());
    };
    for (int d = 0; d < 1000; ++d) {
        std::vector<uint64_t> features(200);
        for (auto &f : features) f = rng();
        add(2 * d, features);
        if (d % 2 == 0) {  // a copy with 5 of 200 features replaced: Jaccard 195/205 = 0.95
            for (int k = 0; k < 5; ++k) features[k] = rng();
            add(2 * d + 1, features);
            planted.emplace(2 * d, 2 * d + 1);
        }
    }
    const size_t n = ids.size();
    const double threshold = 0.8;
    std::vector<JaccardPair> out;
    RunControl control;
    control.context = &out;
    ASSERT_EQ(minhash_pairs(ids.data(), signatures.data(), n, slots, threshold, lsh_parameters(threshold, slots),
                            collect_jaccard, control),
              RunStatus::done);
    std::set<std::pair<int64_t, int64_t>> found;
    for (const auto &p : out) {
        EXPECT_LT(p.a, p.b);
        EXPECT_GE(p.jaccard, threshold);
        EXPECT_TRUE(found.emplace(p.a, p.b).second) << "pair reported twice";
    }
    size_t recalled = 0;
    for (const auto &p : planted) recalled += found.count(p);
    EXPECT_GE(recalled, planted.size() * 99 / 100);
    // Nothing unverified: every reported pair has a brute-force estimate >= threshold.
    for (const auto &p : out) {
        const size_t i = std::find(ids.begin(), ids.end(), p.a) - ids.begin();
        const size_t j = std::find(ids.begin(), ids.end(), p.b) - ids.begin();
        EXPECT_DOUBLE_EQ(p.jaccard, minhash_jaccard(&signatures[i * slots], &signatures[j * slots], slots));
    }
    // One band at a time over two partitions by band hash: the same pairs, each once.
    const auto parameters = lsh_parameters(threshold, slots);
    std::vector<JaccardPair> banded;
    RunControl banded_control;
    banded_control.context = &banded;
    for (int band = 0; band < parameters.bands; ++band) {
        for (uint64_t part = 0; part < 2; ++part) {
            std::vector<int64_t> part_ids;
            std::vector<uint32_t> part_signatures;
            for (size_t i = 0; i < n; ++i) {
                if ((minhash_band_hash(&signatures[i * slots], band, parameters.rows) >> 63) != part) continue;
                part_ids.push_back(ids[i]);
                part_signatures.insert(part_signatures.end(), &signatures[i * slots], &signatures[(i + 1) * slots]);
            }
            ASSERT_EQ(minhash_pairs(part_ids.data(), part_signatures.data(), part_ids.size(), slots, threshold,
                                    parameters, collect_jaccard, banded_control, band, 1),
                      RunStatus::done);
        }
    }
    auto key = [](const JaccardPair &p) { return std::make_pair(p.a, p.b); };
    std::vector<std::pair<int64_t, int64_t>> all_pairs, banded_pairs;
    for (const auto &p : out) all_pairs.push_back(key(p));
    for (const auto &p : banded) banded_pairs.push_back(key(p));
    std::sort(all_pairs.begin(), all_pairs.end());
    std::sort(banded_pairs.begin(), banded_pairs.end());
    EXPECT_EQ(banded_pairs, all_pairs);
    EXPECT_THROW(minhash_pairs(ids.data(), signatures.data(), n, slots, threshold, LshParameters{20, 7}, collect_jaccard,
                               control),
                 std::invalid_argument);
}

// Dedup-on-load locks: any two fingerprints within the radius share a key (pigeonhole), keys
// are sorted, distinct, below nkeys, at most radius + 1 of them; fingerprints exactly at the
// boundary (radius bits apart) are covered too.
TEST(NeighbourhoodLockKeys, NearDuplicatesShareAKey) {
    std::mt19937_64 rng(42);
    for (int radius = 0; radius <= 64; ++radius) {
        for (int trial = 0; trial < 300; ++trial) {
            const uint64_t a = rng();
            uint64_t b = a;
            const int flips = radius == 0 ? 0 : static_cast<int>(rng() % (radius + 1));
            for (int f = 0; f < flips; ++f) b ^= uint64_t{1} << (rng() % 64);  // at most `flips` bits
            if (trial == 0 && radius < 64) {  // exactly `radius` bits apart
                b = a;
                for (int bit = 0; bit < radius; ++bit) b ^= uint64_t{1} << (bit * 64 / (radius ? radius : 1) % 64);
            }
            ASSERT_LE(hamming_distance(a, b), radius);
            uint32_t ka[65], kb[65];
            const int na = neighbourhood_lock_keys(a, radius, 1024, ka);
            const int nb = neighbourhood_lock_keys(b, radius, 1024, kb);
            ASSERT_GE(na, 1);
            ASSERT_LE(na, std::min(radius + 1, 64));
            ASSERT_TRUE(std::is_sorted(ka, ka + na));
            ASSERT_EQ(std::adjacent_find(ka, ka + na), ka + na);
            ASSERT_LT(*std::max_element(ka, ka + na), 1024u);
            std::vector<uint32_t> common;
            std::set_intersection(ka, ka + na, kb, kb + nb, std::back_inserter(common));
            ASSERT_FALSE(common.empty()) << "radius " << radius << " a " << a << " b " << b;
        }
    }
}

}  // namespace
}  // namespace simhash

// A caller that partitions rows by each table's key (a distributed join) finds every pair within
// the radius exactly once: the tables whose keys agree include exactly one that reports it.
TEST(CombinationFilter, EveryPairWithinTheRadiusIsReportedByExactlyOneTable) {
    std::mt19937_64 rng(17);
    for (auto [radius, blocks, key_blocks] : {std::tuple{0, 1, 1}, {3, 4, 1}, {3, 5, 2}, {6, 8, 2}, {9, 12, 3}}) {
        const simhash::NearPairsPlan plan = simhash::plan_with_blocks(radius, blocks, key_blocks);
        std::vector<simhash::CombinationFilter> filters;
        for (size_t c = 0; c < plan.tables; ++c) filters.emplace_back(plan, c);
        for (int trial = 0; trial < 3000; ++trial) {
            const uint64_t x = rng();
            uint64_t y = x;
            const int flips = static_cast<int>(rng() % static_cast<uint64_t>(radius + 3));
            for (int f = 0; f < flips; ++f) y ^= uint64_t{1} << (rng() % 64);
            const int distance = __builtin_popcountll(x ^ y);
            int reporting = 0;
            for (const auto &filter : filters) {
                const bool reports = filter.reports(x, y);
                EXPECT_EQ(reports, filter.reports(y, x));
                if (reports) {
                    EXPECT_EQ(filter.key(x), filter.key(y));
                    ++reporting;
                }
            }
            EXPECT_EQ(reporting, distance <= radius ? 1 : 0) << "radius " << radius << ", distance " << distance;
        }
    }
    const simhash::NearPairsPlan plan = simhash::plan_with_blocks(3, 4, 1);
    EXPECT_THROW(simhash::CombinationFilter(plan, plan.tables), std::invalid_argument);
}

TEST(EdgeComponents, GroupsEveryIdOfAnEdgeUnderTheSmallestIdOfItsComponent) {
    // 5-3, 3-9 (one component), 20-11 twice, a self-loop on 7, a large id.
    const simhash::IdFingerprint edges[] = {{5, 3}, {3, 9}, {20, 11}, {11, 20}, {7, 7}, {int64_t{1} << 40, 9}};
    int64_t ids[12], groups[12];
    const size_t m = simhash::edge_components(edges, 6, ids, groups);
    ASSERT_EQ(m, 7u);
    const int64_t expected_ids[] = {3, 5, 7, 9, 11, 20, int64_t{1} << 40};
    const int64_t expected_groups[] = {3, 3, 7, 3, 11, 11, 3};
    for (size_t i = 0; i < m; ++i) {
        EXPECT_EQ(ids[i], expected_ids[i]);
        EXPECT_EQ(groups[i], expected_groups[i]);
    }
    EXPECT_EQ(simhash::edge_components(edges, 0, ids, groups), 0u);
}

// A band reports a pair exactly when minhash_pairs reports it from that band: over every band,
// each pair minhash_pairs finds is reported once, and nothing else is.
TEST(MinhashBandReports, AgreesWithMinhashPairsBandByBand) {
    std::mt19937_64 rng(23);
    const int slots = 32, bands = 6, rows = 5;
    const size_t n = 120;
    std::vector<uint32_t> signatures(n * slots);
    std::vector<int64_t> ids(n);
    for (size_t i = 0; i < n; ++i) {
        ids[i] = static_cast<int64_t>(i);
        for (int s = 0; s < slots; ++s)  // rows of a family of 4 share most slots
            signatures[i * slots + s] = rng() % 4 == 0 ? static_cast<uint32_t>(rng()) : static_cast<uint32_t>((i / 4) * 1000 + s);
    }
    simhash::LshParameters parameters;
    parameters.bands = bands;
    parameters.rows = rows;
    std::set<std::pair<int64_t, int64_t>> expected;
    auto collect = [](void *context, const simhash::JaccardPair *pairs, size_t count) {
        auto *out = static_cast<std::set<std::pair<int64_t, int64_t>> *>(context);
        for (size_t k = 0; k < count; ++k) out->insert({pairs[k].a, pairs[k].b});
        return true;
    };
    simhash::RunControl control;
    control.context = &expected;
    ASSERT_EQ(simhash::minhash_pairs(ids.data(), signatures.data(), n, slots, 0.5, parameters, collect, control),
              simhash::RunStatus::done);
    EXPECT_GT(expected.size(), 50u);
    std::set<std::pair<int64_t, int64_t>> reported;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            int reporting = 0;
            for (int band = 0; band < bands; ++band) {
                double jaccard;
                reporting += simhash::minhash_band_reports(&signatures[i * slots], &signatures[j * slots], slots, rows, band, 0.5, &jaccard);
            }
            EXPECT_LE(reporting, 1);
            if (reporting) reported.insert({ids[i], ids[j]});
        }
    EXPECT_EQ(reported, expected);
    double jaccard;
    EXPECT_THROW(simhash::minhash_band_reports(&signatures[0], &signatures[slots], slots, rows, 7, 0.5, &jaccard),
                 std::invalid_argument);
}

TEST(RowGroups, RootsAreTheRowsWithTheSmallestIds) {
    // Rows 0..5 with ids; pairs (row numbers) join {0, 2, 4} and {1, 5}; row 3 stays alone.
    const int64_t ids[] = {50, 7, 30, 1, 40, 3};
    uint32_t parent[6];
    for (uint32_t i = 0; i < 6; ++i) parent[i] = i;
    const simhash::NearPair pairs[] = {{0, 2, 1}, {4, 2, 2}, {5, 1, 0}, {0, 4, 3}};
    simhash::unite_rows_by_pairs(parent, ids, pairs, 4);
    const uint32_t expected_root[] = {2, 5, 2, 3, 2, 5};  // ids 30 and 3 are the smallest of their sets
    for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(simhash::row_group_root(parent, i), expected_root[i]) << "row " << i;
}
