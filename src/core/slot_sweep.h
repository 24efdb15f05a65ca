// A batch of centers swept through a sorted table keyed on one 16-bit block, for a bulk load's
// check against a large index (simhash_search_batch on runs of four 16-bit tables).
//
// For radius r <= 3 over four 16-bit blocks, a pair within r bits has blocks 0-1 within one bit or
// blocks 2-3 within one bit: the four blocks differ in at most three bits, so one of the two halves
// differs in at most one. Within one bit over a half (block t, block t + 1) means: block t equal and
// block t + 1 within one bit, or block t one bit away and block t + 1 equal. So two tables, the one
// keyed on block 0 and the one keyed on block 2, each read once, slot by slot (a slot: the entries
// of one value of the table's block, sorted by the next block), find every pair: for slot s the
// centers whose block is s want the entries whose next block is within one bit of theirs (17
// values), and the centers whose block is one bit from s want the entries whose next block equals
// theirs (1 value). A bitmap of the wanted next-block values filters a slot's entries with one
// lookup each; only those that pass are compared with the slot's centers.
//
// A batch of a million centers touches every slot: reading half of the index's tables once, in
// order, is what the check costs, instead of four tables (every block exact, the next within one
// bit) or many more probes.
//
// Keys here are a center's key rotated so that the table's block is on top (rotate_blocks): the
// top 16 bits are the slot, the next 16 the next block, and Hamming distances are unchanged.
// Plain data and caller-provided memory: no allocation, no exception.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simhash {

// The largest radius a sweep of the two half tables finds every pair for.
constexpr int kSlotSweepMaxRadius = 3;
// Slots of a table keyed on a 16-bit block.
constexpr uint32_t kSlotSweepSlots = uint32_t{1} << 16;

// `key` rotated left by 16 t bits: block t (of four 16-bit blocks, block 0 on top) on top.
inline uint64_t rotate_blocks(uint64_t key, int t) {
    const int bits = 16 * (t & 3);
    return bits == 0 ? key : (key << bits) | (key >> (64 - bits));
}
inline uint32_t slot_of(uint64_t rotated) { return static_cast<uint32_t>(rotated >> 48); }
inline uint32_t next_block_of(uint64_t rotated) { return static_cast<uint32_t>(rotated >> 32) & 0xffff; }

// The centers of a sweep grouped by slot: the centers of slot v are keys[first[v] .. first[v + 1])
// (rotated keys), their batch numbers in centers[] alike.
struct SlotGroups {
    uint32_t *first;  // kSlotSweepSlots + 1
    uint64_t *keys;
    uint32_t *centers;
    size_t n;
};

// Bytes slot_groups_build needs for n centers (aligned for uint64_t).
size_t slot_groups_bytes(size_t n);
// Groups n centers (n < 2^32): rotated keys `keys`, batch numbers `centers`.
void slot_groups_build(SlotGroups *groups, void *memory, const uint64_t *keys, const uint32_t *centers, size_t n);
// Whether any center wants slot `slot` (its own block, or a block one bit away).
bool slot_groups_want(const SlotGroups *groups, uint32_t slot);
// Asks for the first lines of the centers slot_wants_fill will read for slot `slot` (17 groups
// spread over the batch): started a few slots ahead, their cache misses overlap.
void slot_groups_prefetch(const SlotGroups *groups, uint32_t slot);

// The wants of one slot: the next-block values wanted, and the centers that want the slot (the
// ones whose block is the slot first).
struct SlotWants {
    uint64_t next[kSlotSweepSlots / 64];
    uint16_t *words;     // the words of `next` set (kSlotSweepSlots / 64 at most listed; more:
    size_t nwords;       // the whole bitmap is cleared), with repeats
    uint64_t *keys;      // rotated keys
    uint64_t *keys48;    // their top 48 bits (the slot, the next block, the block after)
    uint32_t *centers;   // batch numbers
    uint32_t *matches;   // room for select_* results
    size_t n;
    size_t n_own;        // keys[0 .. n_own) have the slot as their block
};

// Bytes slot_wants_init needs for up to n centers (aligned for uint64_t).
size_t slot_wants_bytes(size_t n);
void slot_wants_init(SlotWants *wants, void *memory, size_t n);
// The wants of slot `slot` (the previous slot's are forgotten).
void slot_wants_fill(SlotWants *wants, const SlotGroups *groups, uint32_t slot);

// Whether an entry of the slot whose next block is `next_block` may be within the radius of one of
// its centers (the bitmap: no false negatives, few false positives).
inline bool slot_wants_next(const SlotWants *wants, uint32_t next_block) {
    return (wants->next[next_block >> 6] >> (next_block & 63)) & 1;
}

// The slot's centers within `radius` bits of the rotated key `rotated`: their positions in
// wants->keys, in wants->matches; returns how many.
size_t slot_wants_select(const SlotWants *wants, uint64_t rotated, int radius);
// Whether a center is within `radius` bits of an entry on the 48 bits a ref holds (slot << 32 |
// the 32 bits after the slot): a ref worth fetching.
bool slot_wants_any48(const SlotWants *wants, uint64_t top48, int radius);

}  // namespace simhash
