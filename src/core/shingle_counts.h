// The distinct shingles of one document and how often each occurs, keyed by feature hash: what
// set and log-count SimHash votes and exact Jaccard / containment need.
//
// An open-addressing table (linear probing, at most half full) of 64-bit feature hashes and 32-bit
// counts, 24 bytes per distinct shingle at worst (16 for a ShingleSet, which keeps no counts). The
// number of distinct shingles is capped so that one document cannot take unbounded memory: past
// the cap, add() throws TooManyShingles. Tables of up to kCachedSlots slots are handed back to a per-thread cache when they are
// destroyed, so fingerprinting row after row neither allocates nor faults in fresh pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "feature_hash.h"
#include "shingles.h"

namespace simhash {

// 8,388,608 distinct shingles: about 50 MB of prose in word 3-shingles, a table of 192 MB.
constexpr size_t kMaxDistinctShingles = size_t{1} << 23;

class TooManyShingles : public std::length_error {
public:
    using std::length_error::length_error;
};

// kCounted = false keeps the keys only (ShingleSet): what set votes, document frequencies and
// exact Jaccard need, and a table a third smaller that a lookup reads one cache line of, not two.
template <bool kCounted>
class ShingleTable {
public:
    // expected_distinct sizes the table up front (it still grows past it).
    explicit ShingleTable(size_t expected_distinct = 0, size_t max_distinct = kMaxDistinctShingles);
    ~ShingleTable();
    ShingleTable(ShingleTable &&other) noexcept;
    ShingleTable(const ShingleTable &) = delete;
    ShingleTable &operator=(const ShingleTable &) = delete;
    ShingleTable &operator=(ShingleTable &&other) noexcept;  // swaps: other frees this one's table

    // Counts one occurrence; true when the hash had not been seen before.
    bool add(uint64_t feature_hash) {
        if (feature_hash == 0) {  // 0 marks an empty slot; the hash 0 is counted apart
            zero_count_ += zero_count_ < UINT32_MAX;
            if (zero_count_ > 1) return false;
            note_new_distinct();
            return true;
        }
        size_t slot = feature_hash & mask_;
        uint64_t *const keys = keys_.data();
        while (keys[slot] != 0) {
            if (keys[slot] == feature_hash) {
                if constexpr (kCounted) counts_[slot] += counts_[slot] < UINT32_MAX;
                return false;
            }
            slot = (slot + 1) & mask_;
        }
        keys[slot] = feature_hash;
        if constexpr (kCounted) counts_[slot] = 1;
        note_new_distinct();
        return true;
    }

    // Adds n occurrences at once (to merge counts), saturating at UINT32_MAX; n = 0 adds nothing.
    void add_count(uint64_t feature_hash, uint32_t n);

    // Asks for the cache line where add(feature_hash) starts to look: a batch of prefetches
    // before a batch of adds overlaps their memory latencies in a table larger than the caches.
    void prefetch(uint64_t feature_hash) const { __builtin_prefetch(keys_.data() + (feature_hash & mask_)); }

    size_t distinct() const { return distinct_; }

    // Calls f(feature_hash, count) for every distinct shingle, in an order fixed by the hashes
    // and the order they were first added (a ShingleSet gives every count as 1).
    template <typename F>
    void for_each(F &&f) const {
        if (zero_count_ > 0) f(uint64_t{0}, kCounted ? zero_count_ : uint32_t{1});
        for (size_t i = 0; i <= mask_; ++i)
            if (keys_[i] != 0) f(keys_[i], kCounted ? counts_[i] : uint32_t{1});
    }

    // The distinct feature hashes in ascending order.
    std::vector<uint64_t> sorted_hashes() const;

private:
    void note_new_distinct() {
        if (++distinct_ > max_distinct_) throw_too_many();
        if (2 * distinct_ > mask_ + 1) grow();
    }
    [[noreturn]] void throw_too_many() const;
    void grow();

    void allocate(size_t slots);

    size_t max_distinct_;
    size_t distinct_ = 0;
    size_t mask_;  // slots in use - 1 (a power of two); keys_ may hold more, from the cache
    uint32_t zero_count_ = 0;
    std::vector<uint64_t> keys_;
    std::vector<uint32_t> counts_;  // empty in a ShingleSet
};

using ShingleCounts = ShingleTable<true>;
using ShingleSet = ShingleTable<false>;

// Tables of at most this many slots (12 MB) are kept for the next document.
constexpr size_t kCachedSlots = size_t{1} << 20;

// A table size for a text of len bytes: room for one distinct shingle per 4 bytes of text in
// word units (a short word and its separator), one per byte in character units.
size_t expected_distinct_shingles(size_t len, const ShingleOptions &options);

// Adds hashes to a table in batches whose slots are prefetched first, which overlaps the cache
// misses of a table larger than the CPU caches; on_new(hash) is called for each hash the table had
// not seen (only the order of those calls within a batch can differ from the order of add()).
// Call flush() after the last add().
template <typename Table, typename OnNew>
class PrefetchingAdder {
public:
    PrefetchingAdder(Table &counts, OnNew &on_new) : counts_(counts), on_new_(on_new) {}
    void add(uint64_t hash) {
        batch_[pending_++] = hash;
        if (pending_ == kBatch) flush();
    }
    void flush() {
        for (int i = 0; i < pending_; ++i) counts_.prefetch(batch_[i]);
        for (int i = 0; i < pending_; ++i)
            if (counts_.add(batch_[i])) on_new_(batch_[i]);
        pending_ = 0;
    }

private:
    static constexpr int kBatch = 16;
    Table &counts_;
    OnNew &on_new_;
    uint64_t batch_[kBatch];
    int pending_ = 0;
};

namespace detail {
template <typename Table, typename OnNew>
Table shingle_table(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll,
                    OnNew &&on_new) {
    Table table(expected_distinct_shingles(len, options));
    PrefetchingAdder<Table, OnNew> adder(table, on_new);
    for_each_shingle(
        text, len, options, [&](const char *data, size_t n) { adder.add(feature_hash(data, n)); }, poll);
    adder.flush();
    return table;
}
}  // namespace detail

// Ignores the new-shingle notifications of the functions below when the caller needs none.
struct IgnoreNewShingle {
    void operator()(uint64_t) const {}
};

// The distinct shingles of a text (see shingles.h) with their counts; on_new(hash) is called for
// each distinct shingle the first time it is seen (through a PrefetchingAdder). With a poll,
// throws Stopped when it asks to stop; throws TooManyShingles past kMaxDistinctShingles.
template <typename OnNew = IgnoreNewShingle>
ShingleCounts count_shingles(const char *text, size_t len, const ShingleOptions &options,
                             StopPoll *poll = nullptr, OnNew &&on_new = {}) {
    return detail::shingle_table<ShingleCounts>(text, len, options, poll, on_new);
}

// The same without the counts: the distinct shingles only, on_new as above.
template <typename OnNew = IgnoreNewShingle>
ShingleSet distinct_shingles(const char *text, size_t len, const ShingleOptions &options,
                             StopPoll *poll = nullptr, OnNew &&on_new = {}) {
    return detail::shingle_table<ShingleSet>(text, len, options, poll, on_new);
}

// A bound on the distinct shingles of a text of len bytes (at least 1): every shingle starts at a
// token, and a token takes at least one byte; past kMaxDistinctShingles counting throws instead.
inline size_t distinct_shingles_bound(size_t len) {
    return len == 0 ? 1 : (len < kMaxDistinctShingles ? len : kMaxDistinctShingles);
}

// The distinct shingle hashes of a text in ascending order, written to out, which has room for
// capacity of them (distinct_shingles_bound(len) is always enough); returns how many there are.
// For callers that must not own a std::vector (memory the caller allocated beforehand). Throws
// as distinct_shingles() does, and std::length_error if capacity is too small.
size_t sorted_distinct_shingles(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll,
                                uint64_t *out, size_t capacity);

// Exact set similarity of two documents' shingles, from their ascending distinct hashes.
struct SetOverlap {
    size_t a = 0, b = 0, common = 0;
    // |A ∩ B| / |A ∪ B|; 1 when both sets are empty (two empty documents are the same).
    double jaccard() const;
    // |A ∩ B| / |A|: how much of A is in B; 1 when A is empty (it is contained in anything).
    double containment() const;
    // |A ∩ B| / min(|A|, |B|): how much of the smaller set is in the other, whichever it is (a page
    // quoted whole inside another scores 1 both ways). 1 when both sets are empty and 0 when only
    // one is, as for jaccard(): an empty document duplicates only an empty one.
    double smaller_containment() const;
};
SetOverlap set_overlap(const uint64_t *a, size_t a_count, const uint64_t *b, size_t b_count);
inline SetOverlap set_overlap(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b) {
    return set_overlap(a.data(), a.size(), b.data(), b.size());
}

}  // namespace simhash

#include "cpp_only.h"
