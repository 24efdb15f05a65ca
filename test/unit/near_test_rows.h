// Inputs and references shared by the batch-join unit tests: uniform fingerprints with planted
// clusters and duplicates, all pairs by brute force, connected groups from those pairs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "core/hamming.h"
#include "core/near_pairs.h"

namespace simhash {
namespace near_test {

using Triple = std::tuple<int64_t, int64_t, int>;

// Uniform fingerprints, planted clusters around centers at distances 0..12, exact duplicates.
inline std::vector<IdFingerprint> make_rows(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<IdFingerprint> rows;
    rows.reserve(n);
    int64_t id = 1000;
    while (rows.size() < n) {
        const uint64_t center = rng();
        rows.push_back({id++, center});
        if (rng() % 4 == 0) {  // a cluster of near-duplicates
            const int members = 1 + rng() % 6;
            for (int m = 0; m < members && rows.size() < n; ++m) {
                uint64_t fp = center;
                const int flips = rng() % 13;
                for (int f = 0; f < flips; ++f) fp ^= uint64_t{1} << (rng() % 64);
                rows.push_back({id++, fp});
            }
        }
        if (rng() % 10 == 0 && rows.size() < n) rows.push_back({id++, center});  // duplicate
    }
    std::shuffle(rows.begin(), rows.end(), rng);
    return rows;
}

inline std::vector<Triple> brute_force(const std::vector<IdFingerprint> &rows, int radius) {
    std::vector<Triple> out;
    for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = i + 1; j < rows.size(); ++j) {
            const int d = hamming_distance(rows[i].fingerprint, rows[j].fingerprint);
            if (d <= radius)
                out.emplace_back(std::min(rows[i].id, rows[j].id), std::max(rows[i].id, rows[j].id), d);
        }
    std::sort(out.begin(), out.end());
    return out;
}

// Connected groups of the within-radius graph: id -> smallest id of its component.
inline std::map<int64_t, int64_t> reference_connected(const std::vector<IdFingerprint> &rows, int radius) {
    std::map<int64_t, int64_t> parent;
    for (const auto &r : rows) parent[r.id] = r.id;
    std::function<int64_t(int64_t)> find = [&](int64_t x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
    for (const auto &t : brute_force(rows, radius)) {
        const int64_t a = find(std::get<0>(t)), b = find(std::get<1>(t));
        parent[std::max(a, b)] = std::min(a, b);
    }
    std::map<int64_t, int64_t> group;
    for (const auto &r : rows) group[r.id] = find(r.id);  // roots are component minima
    return group;
}

}  // namespace near_test
}  // namespace simhash
