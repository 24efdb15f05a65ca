#include "core/run_tiers.h"

#include <algorithm>

namespace simhash {

int run_tier(uint64_t entries, const RunTierPolicy &policy) {
    int tier = 0;
    // Compare by division so that base * fanout^tier never overflows.
    uint64_t scaled = entries;
    while (scaled > policy.base) {
        scaled = scaled / policy.fanout + (scaled % policy.fanout != 0);
        ++tier;
    }
    return tier;
}

namespace {

// Writes the `count` smallest of the runs accepted by `in_scope` to `chosen`, smallest first.
template <typename Scope>
int smallest(const uint64_t *sizes, size_t n, int count, Scope in_scope, int *chosen) {
    int taken = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!in_scope(i)) continue;
        // Insertion into the sorted prefix chosen[0..taken).
        int at = taken < count ? taken++ : count;
        if (at == count && sizes[i] >= sizes[chosen[count - 1]]) continue;
        if (at == count) at = count - 1;
        while (at > 0 && sizes[chosen[at - 1]] > sizes[i]) {
            chosen[at] = chosen[at - 1];
            --at;
        }
        chosen[at] = static_cast<int>(i);
    }
    return taken;
}

}  // namespace

int choose_runs_to_merge(const uint64_t *sizes, size_t n, const RunTierPolicy &policy, int *chosen) {
    if (n < 2) return 0;
    int lowest_full_tier = -1;
    {
        // Count runs per tier; tiers beyond 63 cannot occur with 64-bit sizes and base >= 1.
        int counts[65] = {0};
        for (size_t i = 0; i < n; ++i) ++counts[std::min(run_tier(sizes[i], policy), 64)];
        for (int tier = 0; tier <= 64; ++tier)
            if (counts[tier] >= policy.fanout) {
                lowest_full_tier = tier;
                break;
            }
    }
    if (lowest_full_tier >= 0)
        return smallest(sizes, n, policy.fanout,
                        [&](size_t i) { return std::min(run_tier(sizes[i], policy), 64) == lowest_full_tier; },
                        chosen);
    if (n > static_cast<size_t>(policy.max_runs))
        return smallest(sizes, n, std::min<int>(policy.fanout, static_cast<int>(n)), [](size_t) { return true; },
                        chosen);
    return 0;
}

}  // namespace simhash
