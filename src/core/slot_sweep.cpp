#include "core/slot_sweep.h"

#include <cstring>

#include "core/counting_sort.h"
#include "core/hamming.h"

namespace simhash {

namespace {

size_t round_up8(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

constexpr size_t kWords = kSlotSweepSlots / 64;

}  // namespace

size_t slot_groups_bytes(size_t n) {
    return round_up8(sizeof(uint32_t) * (kSlotSweepSlots + 1)) + sizeof(uint64_t) * n + round_up8(sizeof(uint32_t) * n);
}

void slot_groups_build(SlotGroups *groups, void *memory, const uint64_t *keys, const uint32_t *centers, size_t n) {
    char *p = static_cast<char *>(memory);
    groups->first = reinterpret_cast<uint32_t *>(p);
    p += round_up8(sizeof(uint32_t) * (kSlotSweepSlots + 1));
    groups->keys = reinterpret_cast<uint64_t *>(p);
    p += sizeof(uint64_t) * n;
    groups->centers = reinterpret_cast<uint32_t *>(p);
    groups->n = n;
    counting_sort(
        n, kSlotSweepSlots, groups->first, [&](size_t i) { return slot_of(keys[i]); },
        [&](size_t i, uint32_t at) {
            groups->keys[at] = keys[i];
            groups->centers[at] = centers[i];
        });
}

bool slot_groups_want(const SlotGroups *groups, uint32_t slot) {
    const uint32_t *first = groups->first;
    if (first[slot + 1] > first[slot]) return true;
    for (int b = 0; b < 16; ++b) {
        const uint32_t v = slot ^ (uint32_t{1} << b);
        if (first[v + 1] > first[v]) return true;
    }
    return false;
}

void slot_groups_prefetch(const SlotGroups *groups, uint32_t slot) {
    for (int b = -1; b < 16; ++b) {
        const uint32_t at = groups->first[b < 0 ? slot : slot ^ (uint32_t{1} << b)];
        __builtin_prefetch(groups->keys + at);
        __builtin_prefetch(groups->centers + at);
    }
}

size_t slot_wants_bytes(size_t n) {
    return 2 * sizeof(uint64_t) * n + 2 * round_up8(sizeof(uint32_t) * n) + sizeof(uint16_t) * kWords;
}

void slot_wants_init(SlotWants *wants, void *memory, size_t n) {
    std::memset(wants->next, 0, sizeof(wants->next));
    char *p = static_cast<char *>(memory);
    wants->keys = reinterpret_cast<uint64_t *>(p);
    p += sizeof(uint64_t) * n;
    wants->keys48 = reinterpret_cast<uint64_t *>(p);
    p += sizeof(uint64_t) * n;
    wants->centers = reinterpret_cast<uint32_t *>(p);
    p += round_up8(sizeof(uint32_t) * n);
    wants->matches = reinterpret_cast<uint32_t *>(p);
    p += round_up8(sizeof(uint32_t) * n);
    wants->words = reinterpret_cast<uint16_t *>(p);
    wants->nwords = 0;
    wants->n = 0;
    wants->n_own = 0;
}

void slot_wants_fill(SlotWants *wants, const SlotGroups *groups, uint32_t slot) {
    // Local copies: the stores below would otherwise make the compiler reload every pointer.
    uint64_t *next = wants->next;
    uint16_t *words = wants->words;
    if (wants->nwords > kWords)
        std::memset(next, 0, sizeof(wants->next));
    else
        for (size_t w = 0; w < wants->nwords; ++w) next[words[w]] = 0;
    uint64_t *keys = wants->keys;
    uint64_t *keys48 = wants->keys48;
    uint32_t *centers = wants->centers;
    const uint32_t *first = groups->first;
    size_t n = 0, nwords = 0;
    // No test of whether a word was set before (a branch the values would make unpredictable):
    // every word set is listed, repeats and all, up to kWords.
    auto want = [&](uint32_t v) {
        next[v >> 6] |= uint64_t{1} << (v & 63);
        if (nwords < kWords) words[nwords] = static_cast<uint16_t>(v >> 6);
        ++nwords;
    };
    // The slot's own block first: each wants its next block and every value one bit away; then
    // the blocks one bit away: each wants its next block only.
    for (int b = -1; b < 16; ++b) {
        const uint32_t value = b < 0 ? slot : slot ^ (uint32_t{1} << b);
        for (uint32_t j = first[value], end = first[value + 1]; j < end; ++j) {
            const uint64_t key = groups->keys[j];
            keys[n] = key;
            keys48[n] = key >> 16;
            centers[n] = groups->centers[j];
            ++n;
            const uint32_t v = next_block_of(key);
            want(v);
            if (b < 0)
                for (int k = 0; k < 16; ++k) want(v ^ (uint32_t{1} << k));
        }
        if (b < 0) wants->n_own = n;
    }
    wants->n = n;
    wants->nwords = nwords;
}

size_t slot_wants_select(const SlotWants *wants, uint64_t rotated, int radius) {
    return select_within_radius(wants->keys, wants->n, rotated, radius, wants->matches);
}

bool slot_wants_any48(const SlotWants *wants, uint64_t top48, int radius) {
    return select_within_radius(wants->keys48, wants->n, top48, radius, wants->matches) > 0;
}

}  // namespace simhash
