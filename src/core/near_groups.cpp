// Groups over the within-radius graph (connected components, leaders) and connected components
// of given edges: the batch engine's grouping part (near_pairs.h has the API).
#include "near_pairs.h"

#include "near_engine.h"

namespace simhash {

using namespace engine;



size_t edge_components(const IdFingerprint *edges, size_t n, int64_t *ids, int64_t *groups) {
    if (n > (size_t{UINT32_MAX} - 1) / 2) throw std::length_error("edge_components takes at most 2^31 - 1 edges");
    for (size_t i = 0; i < n; ++i) {
        ids[2 * i] = edges[i].id;
        ids[2 * i + 1] = static_cast<int64_t>(edges[i].fingerprint);
    }
    std::sort(ids, ids + 2 * n);
    const size_t m = static_cast<size_t>(std::unique(ids, ids + 2 * n) - ids);
    auto index_of = [&](int64_t id) { return static_cast<uint32_t>(std::lower_bound(ids, ids + m, id) - ids); };
    UnionFind components(m);
    for (size_t i = 0; i < n; ++i) components.unite(index_of(edges[i].id), index_of(static_cast<int64_t>(edges[i].fingerprint)));
    // The root of a component is its smallest index, so its smallest id.
    for (size_t i = 0; i < m; ++i) groups[i] = ids[components.find(static_cast<uint32_t>(i))];
    return m;
}

uint32_t row_group_root(uint32_t *parent, uint32_t row) {
    while (parent[row] != row) {
        parent[row] = parent[parent[row]];
        row = parent[row];
    }
    return row;
}

void unite_rows_by_pairs(uint32_t *parent, const int64_t *ids, const NearPair *pairs, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const uint32_t a = row_group_root(parent, static_cast<uint32_t>(pairs[i].a));
        const uint32_t b = row_group_root(parent, static_cast<uint32_t>(pairs[i].b));
        if (a == b) continue;
        if (ids[a] <= ids[b])
            parent[b] = a;
        else
            parent[a] = b;
    }
}

size_t leader_groups_memory(size_t n, uint64_t pairs) {
    return n * kBytesPerRowLeaderGroups + static_cast<size_t>(pairs) * kBytesPerLeaderPair;
}

namespace {
// Thrown from the pair enumeration of a leader run once its pairs cannot fit the memory limit.
struct OverMemoryLimit {};
}  // namespace

RunStatus near_groups(const IdFingerprint *rows, size_t n, int radius, GroupMethod method,
                      int64_t *group, const RunControl &control, size_t memory_limit, size_t *memory_needed,
                      bool *memory_needed_exact) {
    check_radius(radius);
    auto refuse = [&](uint64_t pairs, bool exact) {
        if (memory_needed) *memory_needed = leader_groups_memory(n, pairs);
        if (memory_needed_exact) *memory_needed_exact = exact;
        return RunStatus::over_memory_limit;
    };
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    try {
        Poller poller(control);
        // Sort (fingerprint, row index) and collapse; rows of a distinct fingerprint share a group
        // in both methods (distance 0).
        std::vector<IdFingerprint> sorted(n);
        for (size_t i = 0; i < n; ++i) sorted[i] = IdFingerprint{static_cast<int64_t>(i), rows[i].fingerprint};
        DistinctSet set;
        collapse(sorted.data(), n, set, poller);
        const size_t u = set.fingerprints.size();
        // Smallest id of each distinct fingerprint; renumber distinct fingerprints by it so that
        // "smaller index" means "smaller smallest id".
        std::vector<int64_t> min_id(u);
        for (size_t x = 0; x < u; ++x) {
            int64_t m = rows[sorted[set.offsets[x]].id].id;
            for (uint32_t i = set.offsets[x] + 1; i < set.offsets[x + 1]; ++i) m = std::min(m, rows[sorted[i].id].id);
            min_id[x] = m;
        }
        std::vector<uint32_t> order(u), rank(u);
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return min_id[a] < min_id[b]; });
        for (size_t k = 0; k < u; ++k) rank[order[k]] = static_cast<uint32_t>(k);

        const NearPairsPlan plan = plan_near_pairs(u, radius);
        std::vector<int64_t> distinct_group(u);
        if (method == GroupMethod::connected) {
            UnionFind sets(u);
            distinct_pairs(set.fingerprints.data(), u, plan, poller,
                           [&](size_t x, size_t y, int) { sets.unite(rank[x], rank[y]); });
            for (size_t x = 0; x < u; ++x) distinct_group[x] = min_id[order[sets.find(rank[x])]];
        } else {
            // Greedy leaders in ascending rank (smallest id) order. When rank k leads, every
            // earlier rank is already assigned, so it only claims later ranks: each pair is kept
            // once, as the later rank in the earlier rank's list (4 bytes), the lists allocated
            // once at their exact size. The enumeration counts the lists' lengths and, while the
            // memory limit has room for a pair twice over (8 bytes now, 4 in the lists), keeps
            // the pairs in chunks (no reallocation peaks). When it could not keep them all, a
            // second enumeration fills the lists; the run is refused before that when even the
            // lists do not fit.
            // At radius 64 every pair of distinct fingerprints is within it: their number is known
            // without enumerating them (u(u - 1)/2, 2e10 at 200,000 rows).
            if (radius >= 64) {
                const uint64_t all_pairs = static_cast<uint64_t>(u) * (u - (u > 0)) / 2;
                if (leader_groups_memory(n, all_pairs) > memory_limit) return refuse(all_pairs, true);
            }
            const size_t fixed = leader_groups_memory(n, 0);
            if (fixed > memory_limit) return refuse(0, u < 2);
            // Pairs that fit the limit: the enumeration stops at the first one past them.
            const uint64_t fitting = (memory_limit - fixed) / kBytesPerLeaderPair;
            std::vector<size_t> first(u + 1, 0);  // then: first[k] is where rank k's list ends
            const uint64_t keepable = (memory_limit - fixed) / (sizeof(uint64_t) + kBytesPerLeaderPair);
            constexpr size_t kChunkPairs = 4096;
            std::vector<std::unique_ptr<uint64_t[]>> chunks;  // (earlier rank << 32) | later rank
            bool all_kept = true;
            uint64_t pairs = 0;
            try {
                distinct_pairs(set.fingerprints.data(), u, plan, poller, [&](size_t x, size_t y, int) {
                    const uint64_t earlier = std::min(rank[x], rank[y]), later = std::max(rank[x], rank[y]);
                    ++first[earlier + 1];
                    if (all_kept) {
                        const size_t slot = pairs % kChunkPairs;
                        if (slot == 0 && pairs + kChunkPairs > keepable) {
                            chunks.clear();  // no room: the second enumeration fills the lists
                            all_kept = false;
                        } else {
                            if (slot == 0) chunks.emplace_back(new uint64_t[kChunkPairs]);
                            chunks.back()[slot] = earlier << 32 | later;
                        }
                    }
                    if (++pairs > fitting) throw OverMemoryLimit();
                });
            } catch (const OverMemoryLimit &) {
                return refuse(pairs, false);
            }
            for (size_t k = 0; k < u; ++k) first[k + 1] += first[k];
            std::vector<uint32_t> later(pairs);
            auto place = [&](uint64_t earlier, uint64_t later_rank) {
                later[first[earlier]++] = static_cast<uint32_t>(later_rank);
            };
            if (all_kept) {
                for (uint64_t i = 0; i < pairs; ++i) {
                    const uint64_t pair = chunks[i / kChunkPairs][i % kChunkPairs];
                    place(pair >> 32, pair & 0xFFFFFFFFu);
                }
                chunks.clear();
            } else {
                distinct_pairs(set.fingerprints.data(), u, plan, poller, [&](size_t x, size_t y, int) {
                    place(std::min(rank[x], rank[y]), std::max(rank[x], rank[y]));
                });
            }
            // Whether a fingerprint has its group, kept apart from the group ids: every int64 is a
            // possible id, so no id value can mean "none yet".
            std::vector<uint8_t> assigned(u, 0);
            poller.begin("choosing leaders", u);
            for (size_t k = 0; k < u; ++k) {
                poller.step(k);
                const size_t leader = order[k];
                if (assigned[leader]) continue;
                assigned[leader] = 1;
                distinct_group[leader] = min_id[leader];
                for (size_t e = k == 0 ? 0 : first[k - 1]; e < first[k]; ++e) {
                    const size_t member = order[later[e]];
                    if (assigned[member]) continue;
                    assigned[member] = 1;
                    distinct_group[member] = min_id[leader];
                }
            }
        }
        for (size_t x = 0; x < u; ++x)
            for (uint32_t i = set.offsets[x]; i < set.offsets[x + 1]; ++i) group[sorted[i].id] = distinct_group[x];
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

}  // namespace simhash
