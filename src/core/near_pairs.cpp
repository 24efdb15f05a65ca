// The batch engine's plans and pairs: table layouts and their cost model, combination keys, the
// permuted-table pairs join (whole or one combination at a time), repeated-id checks and the
// neighbourhood lock keys. Groups are in near_groups.cpp, MinHash LSH in minhash_lsh.cpp; the
// shared internals in near_engine.h.
#include "near_pairs.h"

#include <algorithm>
#include <stdexcept>

#include "blocks.h"
#include "near_engine.h"

namespace simhash {

using namespace engine;

FirstCombination::FirstCombination(const NearPairsPlan &plan, size_t combination) {
    for (int b = 0; b < plan.blocks; ++b)
        for (int i = 0; i < plan.block_width[b]; ++i) block_of_bit_[plan.block_start[b] + i] = static_cast<uint8_t>(b);
    const uint64_t mask = combination_mask(plan, combination);
    const int highest = 63 - __builtin_clzll(mask);
    before_ = low_bits(highest) & ~mask;
}

bool FirstCombination::owns(uint64_t x, uint64_t y) const {
    uint64_t diff = x ^ y, differing_blocks = 0;
    while (diff) {
        differing_blocks |= uint64_t{1} << block_of_bit_[__builtin_ctzll(diff)];
        diff &= diff - 1;
    }
    // A block below the combination's highest one, outside it, on which x and y agree would
    // make an earlier combination match.
    return (before_ & ~differing_blocks) == 0;
}

CombinationFilter::CombinationFilter(const NearPairsPlan &plan, size_t combination)
    : radius_(plan.radius),
      pieces_((plan.brute_force || combination >= plan.tables)
                  ? throw std::invalid_argument("the plan has no such combination of blocks")
                  : key_pieces(plan, combination)),
      first_(plan, combination) {}

uint64_t CombinationFilter::key(uint64_t fingerprint) const { return extract_key(pieces_, fingerprint); }

bool CombinationFilter::reports(uint64_t x, uint64_t y) const {
    return extract_key(pieces_, x) == extract_key(pieces_, y) && popcount64(x ^ y) <= radius_ && first_.owns(x, y);
}


namespace {
constexpr int kRepeatedIdBucketBits = 10;

// id_at(i) is the i-th id. Ids as unsigned offsets from the smallest id: exact for any int64 range.
template <typename IdAt>
bool find_repeated(size_t n, IdAt id_at, int64_t *repeated) {
    if (n < 2) return false;
    int64_t low = id_at(0), high = low;
    for (size_t i = 1; i < n; ++i) {
        low = std::min(low, id_at(i));
        high = std::max(high, id_at(i));
    }
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    auto offset = [&](size_t i) { return static_cast<uint64_t>(id_at(i)) - static_cast<uint64_t>(low); };
    if (range < static_cast<uint64_t>(n) * 16) {
        // Serial keys: one bit per possible id, in cache for millions of rows.
        std::vector<uint64_t> seen(range / 64 + 1, 0);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t k = offset(i), bit = uint64_t{1} << (k & 63);
            if (seen[k >> 6] & bit) {
                *repeated = id_at(i);
                return true;
            }
            seen[k >> 6] |= bit;
        }
        return false;
    }
    // Sparse ids: bucketed by the top bits of a bijective hash (equal ids have equal hashes, and
    // any set of ids spreads evenly) into a few hundred buckets, then each bucket checked with a
    // small hash set that stays in cache: two passes over the ids and one over the hashes.
    int bits = 0;
    while (bits < kRepeatedIdBucketBits && (n >> bits) > 4096) ++bits;
    auto bucket = [bits](uint64_t hash) { return bits ? static_cast<size_t>(hash >> (64 - bits)) : 0; };
    std::vector<size_t> start((size_t{1} << bits) + 1, 0);
    for (size_t i = 0; i < n; ++i) ++start[bucket(mix64(offset(i))) + 1];
    size_t largest = 0;
    for (size_t b = 0; b + 1 < start.size(); ++b) {
        largest = std::max(largest, start[b + 1]);
        start[b + 1] += start[b];
    }
    std::unique_ptr<uint64_t[]> hashes(new uint64_t[n]);
    {
        std::vector<size_t> next(start.begin(), start.end() - 1);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t hash = mix64(offset(i));
            hashes[next[bucket(hash)]++] = hash;
        }
    }
    // Open addressing by the hash's low bits; 0 marks an empty slot (a hash of 0 is tracked apart).
    size_t slots = 16;
    while (slots < 2 * largest) slots *= 2;
    std::vector<uint64_t> set(slots);
    uint64_t twice = 0;
    bool found = false;
    for (size_t b = 0; b + 1 < start.size() && !found; ++b) {
        std::fill(set.begin(), set.end(), 0);
        bool zero_seen = false;
        for (size_t i = start[b]; i < start[b + 1] && !found; ++i) {
            const uint64_t hash = hashes[i];
            if (hash == 0) {
                found = zero_seen;
                zero_seen = true;
                continue;
            }
            size_t slot = hash & (slots - 1);
            while (set[slot] != 0 && set[slot] != hash) slot = (slot + 1) & (slots - 1);
            found = set[slot] == hash;
            set[slot] = hash;
            if (found) twice = hash;
        }
    }
    if (!found) return false;
    for (size_t i = 0;; ++i)  // the id behind the hash
        if (mix64(offset(i)) == twice) {
            *repeated = id_at(i);
            return true;
        }
}
}  // namespace

bool find_repeated_id(const IdFingerprint *rows, size_t n, int64_t *repeated) {
    return find_repeated(n, [rows](size_t i) { return rows[i].id; }, repeated);
}

bool find_repeated_id(const int64_t *ids, size_t n, int64_t *repeated) {
    return find_repeated(n, [ids](size_t i) { return ids[i]; }, repeated);
}

double chance_pair_fraction(int radius) {
    check_radius(radius);
    double within = 0;
    for (int d = 0; d <= radius; ++d) within += binomial(64, d);
    return std::ldexp(within, -64);
}

NearPairsPlan plan_with_blocks(int radius, int blocks, int key_blocks) {
    check_radius(radius);
    if (key_blocks < 1 || blocks != radius + key_blocks || blocks > 64)
        throw std::invalid_argument("a plan needs blocks = radius + key_blocks <= 64, key_blocks >= 1");
    NearPairsPlan plan;
    plan.radius = radius;
    fill_blocks(plan, blocks, key_blocks);
    return plan;
}

namespace {
NearPairsPlan cheapest_plan(size_t distinct, int radius, size_t max_tables, bool brute_force_allowed) {
    check_radius(radius);
    NearPairsPlan plan;
    plan.radius = radius;
    const double u = static_cast<double>(distinct);
    plan.brute_force = true;
    plan.estimated_cost = brute_force_allowed ? 0.5 * u * u * kCostPerComparison
                                              : std::numeric_limits<double>::infinity();
    if (radius == 0) {  // identical fingerprints only: no tables
        plan.brute_force = false;
        plan.estimated_cost = 0;
        fill_blocks(plan, 1, 1);
        return plan;
    }
    int best_m = 0, best_t = 0;
    for (int t = 1; radius + t <= 64; ++t) {
        const int m = radius + t;
        const double tables = binomial(m, t);
        if (tables > static_cast<double>(max_tables)) {
            if (t > 1) break;  // C(m, t) grows with t for t <= m / 2
            continue;
        }
        const double cost = table_plan_cost(distinct, m, t, tables);
        if (cost < plan.estimated_cost) {
            plan.estimated_cost = cost;
            best_m = m;
            best_t = t;
        }
    }
    if (best_m != 0) {
        plan.brute_force = false;
        fill_blocks(plan, best_m, best_t);
    } else {
        plan.estimated_cost = 0.5 * u * u * kCostPerComparison;
    }
    return plan;
}
}  // namespace

NearPairsPlan plan_near_pairs(size_t distinct, int radius, size_t max_tables) {
    return cheapest_plan(distinct, radius, max_tables, true);
}

NearPairsPlan plan_table_layout(size_t distinct, int radius, size_t max_tables) {
    return cheapest_plan(distinct, radius, max_tables, false);
}

uint64_t combination_mask(const NearPairsPlan &plan, size_t combination) {
    if (combination >= plan.tables) throw std::out_of_range("no such combination in the plan");
    // Combinatorial number system: c = C(a_t, t) + ... + C(a_1, 1) with a_t > ... > a_1 >= 0.
    uint64_t rest = combination, mask = 0;
    int a = plan.blocks;
    for (int k = plan.key_blocks; k >= 1; --k) {
        do --a; while (exact_binomial(a, k) > rest);
        mask |= uint64_t{1} << a;
        rest -= exact_binomial(a, k);
    }
    return mask;
}

uint64_t combination_key(const NearPairsPlan &plan, size_t combination, uint64_t fingerprint) {
    const KeyPieces pieces = key_pieces(plan, combination);
    return extract_key(pieces, fingerprint);
}

int combination_key_bits(const NearPairsPlan &plan, size_t combination) {
    return key_pieces(plan, combination).bits;
}


RunStatus near_pairs(IdFingerprint *rows, size_t n, int radius, const RunControl &control) {
    check_radius(radius);
    return run_collapsed(rows, n, true, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        const size_t u = set.fingerprints.size();
        distinct_pairs(set.fingerprints.data(), u, plan_near_pairs(u, radius), poller, on_pair);
    });
}

RunStatus near_pairs(IdFingerprint *rows, size_t n, const NearPairsPlan &plan, const RunControl &control) {
    check_radius(plan.radius);
    return run_collapsed(rows, n, true, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        distinct_pairs(set.fingerprints.data(), set.fingerprints.size(), plan, poller, on_pair);
    });
}

RunStatus near_pairs_pass(IdFingerprint *rows, size_t n, const NearPairsPlan &plan,
                          size_t combination, const RunControl &control) {
    check_radius(plan.radius);
    if (plan.brute_force || combination >= plan.tables)
        throw std::invalid_argument("near_pairs_pass needs a table plan and one of its combinations");
    // Identical fingerprints match on every block: they belong to combination 0.
    return run_collapsed(rows, n, combination == 0, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        if (plan.radius == 0) return;
        const size_t u = set.fingerprints.size();
        poller.begin("scanning a permuted table", u);
        TableBuffers buffers(u);
        combination_pairs(set.fingerprints.data(), u, plan, combination, buffers, poller, on_pair);
    });
}

int neighbourhood_lock_keys(uint64_t fingerprint, int radius, uint32_t nkeys, uint32_t *keys) {
    if (radius >= 64) {
        keys[0] = 0;
        return 1;
    }
    if (radius < 0) radius = 0;
    const int m = radius + 1;
    const BlockLayout layout = block_layout(m);
    int n = 0;
    for (int i = 0; i < m; ++i) {
        const uint64_t value = block_value(fingerprint, layout, i);
        const uint64_t h = mix64(value + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1) +
                                 (static_cast<uint64_t>(m) << 56));
        keys[n++] = static_cast<uint32_t>(h % nkeys);
    }
    std::sort(keys, keys + n);
    return static_cast<int>(std::unique(keys, keys + n) - keys);
}

}  // namespace simhash
