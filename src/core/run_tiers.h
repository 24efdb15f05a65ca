// The merge policy of the index's sorted runs (size tiers), apart from PostgreSQL so that it can be
// unit-tested on its own.
//
// Runs are grouped into tiers by their live size: tier 0 holds runs of at most `base` entries (one
// pending list written out), tier i runs of at most base * fanout^i. When a tier holds `fanout`
// runs they are merged into one, which lands in a higher tier. So every entry is rewritten about
// log_fanout(N / base) times whatever N is, a query probes at most (fanout - 1) runs per tier, and
// the largest run is rewritten only when `fanout` runs of its size exist: no merge rewrites the
// whole index while it grows. `max_runs` bounds the run count when sizes are uneven (after heavy
// deletes): the smallest runs are merged first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simhash {

struct RunTierPolicy {
    uint64_t base;  // entries of tier 0's largest run (> 0)
    int fanout;     // runs per tier that trigger a merge (>= 2)
    int max_runs;   // runs above which the smallest are merged regardless of tiers (>= fanout)
};

// The tier of a run of `entries` live entries.
int run_tier(uint64_t entries, const RunTierPolicy &policy);

// Chooses the runs to merge next among `n` runs of `sizes` live entries: writes their indexes to
// `chosen` (room for `policy.fanout`) and returns how many (0: nothing to merge). The lowest tier
// holding `fanout` runs goes first; within it, the smallest runs.
int choose_runs_to_merge(const uint64_t *sizes, size_t n, const RunTierPolicy &policy, int *chosen);

}  // namespace simhash

#include "cpp_only.h"
