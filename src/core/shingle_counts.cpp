#include "shingle_counts.h"

#include <algorithm>
#include <string>

namespace simhash {

namespace {

constexpr size_t kMinSlots = 64;

// The arrays of the last table given back on this thread (empty when none).
struct CachedTable {
    std::vector<uint64_t> keys;
    std::vector<uint32_t> counts;
};
thread_local CachedTable cached_table;

size_t slots_for(size_t distinct) {
    size_t slots = kMinSlots;
    while (slots < 2 * distinct && slots < kCachedSlots) slots *= 2;
    return slots;
}

}  // namespace

size_t expected_distinct_shingles(size_t len, const ShingleOptions &options) {
    return options.unit == ShingleUnit::kChar ? len : len / 4 + 1;
}

template <bool kCounted>
ShingleTable<kCounted>::ShingleTable(size_t expected_distinct, size_t max_distinct) : max_distinct_(max_distinct) {
    allocate(slots_for(expected_distinct < max_distinct ? expected_distinct : max_distinct));
}

template <bool kCounted>
ShingleTable<kCounted>::ShingleTable(ShingleTable &&other) noexcept
    : max_distinct_(other.max_distinct_),
      distinct_(other.distinct_),
      mask_(other.mask_),
      zero_count_(other.zero_count_),
      keys_(std::move(other.keys_)),
      counts_(std::move(other.counts_)) {
    other.distinct_ = 0;
    other.zero_count_ = 0;
}

template <bool kCounted>
ShingleTable<kCounted> &ShingleTable<kCounted>::operator=(ShingleTable &&other) noexcept {
    std::swap(max_distinct_, other.max_distinct_);
    std::swap(distinct_, other.distinct_);
    std::swap(mask_, other.mask_);
    std::swap(zero_count_, other.zero_count_);
    keys_.swap(other.keys_);
    counts_.swap(other.counts_);
    return *this;
}

// The cache keeps the largest key array given back; a counted table's counts go with its keys
// (a set's keys leave the cached counts where they are, for the next counted table).
template <bool kCounted>
ShingleTable<kCounted>::~ShingleTable() {
    if (keys_.size() <= kCachedSlots && keys_.size() > cached_table.keys.size()) {
        cached_table.keys.swap(keys_);
        if constexpr (kCounted) cached_table.counts.swap(counts_);
    }
}

// Uses slots zeroed slots, from the cached arrays when they are large enough.
template <bool kCounted>
void ShingleTable<kCounted>::allocate(size_t slots) {
    if (cached_table.keys.size() >= slots) {
        keys_.swap(cached_table.keys);
        std::fill(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(slots), 0);
        if constexpr (kCounted) {
            counts_.swap(cached_table.counts);
            if (counts_.size() < slots) counts_.resize(slots);
        }
    } else {
        keys_.assign(slots, 0);
        if constexpr (kCounted) counts_.resize(slots);
    }
    mask_ = slots - 1;
}

template <bool kCounted>
void ShingleTable<kCounted>::throw_too_many() const {
    throw TooManyShingles("the document has more than " + std::to_string(max_distinct_) +
                          " distinct shingles, the most counted in memory");
}

template <bool kCounted>
void ShingleTable<kCounted>::grow() {
    const size_t old_slots = mask_ + 1;
    std::vector<uint64_t> new_keys(old_slots * 2, 0);
    std::vector<uint32_t> new_counts(kCounted ? old_slots * 2 : 0);
    const size_t new_mask = old_slots * 2 - 1;
    for (size_t i = 0; i < old_slots; ++i) {
        if (keys_[i] == 0) continue;
        size_t slot = keys_[i] & new_mask;
        while (new_keys[slot] != 0) slot = (slot + 1) & new_mask;
        new_keys[slot] = keys_[i];
        if constexpr (kCounted) new_counts[slot] = counts_[i];
    }
    keys_.swap(new_keys);
    counts_.swap(new_counts);
    mask_ = new_mask;
}

namespace {
void add_saturating(uint32_t *count, uint32_t n) { *count = n > UINT32_MAX - *count ? UINT32_MAX : *count + n; }
}  // namespace

template <bool kCounted>
void ShingleTable<kCounted>::add_count(uint64_t feature_hash, uint32_t n) {
    if (n == 0) return;
    if (feature_hash == 0) {
        const bool is_new = zero_count_ == 0;
        add_saturating(&zero_count_, n);
        if (is_new) note_new_distinct();
        return;
    }
    size_t slot = feature_hash & mask_;
    while (keys_[slot] != 0) {
        if (keys_[slot] == feature_hash) {
            if constexpr (kCounted) add_saturating(&counts_[slot], n);
            return;
        }
        slot = (slot + 1) & mask_;
    }
    keys_[slot] = feature_hash;
    if constexpr (kCounted) counts_[slot] = n;
    note_new_distinct();  // may grow the table: the slot is not used after it
}

template <bool kCounted>
std::vector<uint64_t> ShingleTable<kCounted>::sorted_hashes() const {
    std::vector<uint64_t> hashes;
    hashes.reserve(distinct_);
    for_each([&](uint64_t hash, uint32_t) { hashes.push_back(hash); });
    std::sort(hashes.begin(), hashes.end());
    return hashes;
}

template class ShingleTable<true>;
template class ShingleTable<false>;

double SetOverlap::jaccard() const {
    const size_t united = a + b - common;
    return united == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(united);
}

double SetOverlap::containment() const {
    return a == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(a);
}

double SetOverlap::smaller_containment() const {
    const size_t smaller = a < b ? a : b;
    if (smaller == 0) return a == b ? 1.0 : 0.0;
    return static_cast<double>(common) / static_cast<double>(smaller);
}

SetOverlap set_overlap(const uint64_t *a, size_t a_count, const uint64_t *b, size_t b_count) {
    SetOverlap overlap;
    overlap.a = a_count;
    overlap.b = b_count;
    size_t i = 0, j = 0;
    while (i < a_count && j < b_count) {
        if (a[i] < b[j]) {
            ++i;
        } else if (b[j] < a[i]) {
            ++j;
        } else {
            ++overlap.common;
            ++i;
            ++j;
        }
    }
    return overlap;
}

size_t sorted_distinct_shingles(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll,
                                uint64_t *out, size_t capacity) {
    const std::vector<uint64_t> hashes = distinct_shingles(text, len, options, poll).sorted_hashes();
    if (hashes.size() > capacity) throw std::length_error("sorted_distinct_shingles: output buffer too small");
    std::copy(hashes.begin(), hashes.end(), out);
    return hashes.size();
}

}  // namespace simhash
