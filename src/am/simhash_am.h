// The simhash index access method: exact Hamming-radius search over bigint fingerprints with
// permuted block tables (Manku et al. 2007) probed multi-index-hashing style (Norouzi et al.).
//
// On-disk layout (every page carries SimhashPageOpaque with SIMHASH_PAGE_ID in its special space).
// The index is log-structured: a small unsorted pending list takes inserts, and immutable sorted
// runs hold everything else. Each run is a complete permuted-table index of its own entries:
//   block 0          metapage: magic, version, the runs (largest first, each with its header page,
//                    size and geometry), the pending list, a pending list being merged, and the
//                    retired page sets waiting until no scan can still read them
//   run header       geometry, per-table data chain and directory page counts, and the map pages
//   table 0          data pages sorted by block 0 of fp (blocks numbered from the most significant
//                    bit), full pages, chained; a page holds its fingerprints contiguously, then
//                    their heap TIDs down from the page's end (SimhashPageGetFps /
//                    simhash_page_tid); VACUUM marks a dead
//                    entry in place by clearing its TID's offset (a tombstone)
//   map pages        the run's page list: the block numbers of table 0's pages in order (entry i
//                    of table 0 is slot i % per-page of page i / per-page), then of the directory
//                    pages of table 0, 1, ... in order
//   tables 1..m-1    ref pages of SimhashRef {key, pos} (8 bytes), sorted by block t, chained:
//                    key = the 32 bits of fp that follow block t's directory prefix (the block's
//                    bits below the prefix, then the bits after the block), pos = the entry's
//                    position in the run's table 0. The prefix is known from the directory, so
//                    the key spends its bits where they filter: at 16-bit blocks, 32 bits beyond
//                    the block. pos needs log2(entries) bits: the bits of the 32 it leaves hold
//                    the next bits of fp after the key (the run's ref_tail_bits; 7 at 30M
//                    entries), which filter too
//   directory pages  per table, 2^dirbits slots: for each key prefix (the top dirbits bits of
//                    block t) the data page and offset of the first entry with that prefix or above;
//                    dirbits grows with the run (about log2(entries / 4), up to SIMHASH_MAX_DIRBITS),
//                    each table's at most its own block's length (simhash_table_dirbits), so that
//                    a probe of an exact block value finds a few entries at any size when the
//                    blocks are long enough, and a longer block (blocks differ by a bit when 64
//                    is not a multiple of their count) is not read two values at a time
//   pending pages    unsorted entries (fingerprints, then TIDs), chained; appended by aminsert,
//                    scanned linearly by every query, written out as a new run when over
//                    pending_limit
//   deleted pages    recycled through the FSM
// With the default 4 tables an indexed row costs 14 + 3 * 8 = 38 bytes plus page overhead.
// Runs merge by size tiers (core/run_tiers.h): each entry is rewritten O(log(N / pending)) times
// and no operation rewrites the whole index. A scan of radius r probes, in every run and table t,
// every block value within simhash::block_probe_radius(r, m, t) bits of the query's block (floor(r /
// m) or one less, by the refined pigeonhole of multi-index hashing); in tables 1..m-1 the 32 stored
// bits filter the candidates before the full fingerprint is fetched from table 0 (at radius 3, one
// candidate in ~800,000 passes by chance with 32 bits beyond a 16-bit block); the full 64-bit
// distance decides, and an entry is accepted only from the first table whose block is within that
// table's probing radius: each heap row is in one run and is returned once.
//
// Concurrency: aminsert holds the metapage exclusively while it appends; a scan copies the
// metapage's lists under a share lock and releases it, then reads runs and pending pages under
// their own page locks, so inserts and merges proceed during long scans. Merges serialize through
// a heavyweight lock on the metapage, write the new run off to the side, swap the metapage under
// its exclusive lock, and retire the old pages with the next transaction ID: they are recycled
// only once no snapshot that could have seen the old metapage remains (as nbtree recycles deleted
// pages). On a hot standby, where the primary cannot see the standby's snapshots, scans keep the
// metapage share-locked while they read, which holds back the replay of the swap and of anything
// that reuses the pages.
//
// AM callbacks are called by PostgreSQL directly: they are plain C-style code with no C++ object
// alive across a call that can ereport.
#pragma once

#include "core/hamming.h"
#include "core/bit_permutation.h"
#include "core/block_buckets.h"

#include "compat.h"

extern "C" {
#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/reloptions.h"
#include "access/transam.h"
#include "datatype/timestamp.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"
#include "utils/rel.h"
}

#define SIMHASH_MAGIC 0x53484958u  // "SHIX"
#define SIMHASH_VERSION 5
#define SIMHASH_PAGE_ID 0xFF8Au
#define SIMHASH_METAPAGE_BLKNO 0

#define SIMHASH_MIN_TABLES 2
#define SIMHASH_MAX_TABLES 8
#define SIMHASH_DEFAULT_TABLES 4  // an empty index's nominal count, when the option is auto
#define SIMHASH_AUTO_TABLES 0     // the tables option "auto"
#define SIMHASH_DEFAULT_PENDING_LIMIT 256  // kB
#define SIMHASH_MAX_RUNS 40
#define SIMHASH_MAX_RETIRED 200
// 2^22 slots (32 MB) a table: the directory of 3 tables of 21-22-bit blocks at a billion entries,
// read by backends a page at a time.
#define SIMHASH_MAX_DIRBITS 22

// Page flags (SimhashPageOpaque.flags).
#define SIMHASH_META 0x01
#define SIMHASH_DATA 0x02
#define SIMHASH_DIR 0x04
#define SIMHASH_PENDING 0x08
#define SIMHASH_DELETED 0x10
#define SIMHASH_REF 0x20
#define SIMHASH_MAP 0x40
#define SIMHASH_RUN 0x80

// Build sub-phases reported in pg_stat_progress_create_index.
#define SIMHASH_PHASE_LOAD 2
#define SIMHASH_PHASE_WRITE 3

// 16 bytes, so that the page ID is the last two bytes of the page (where tools look for it).
struct SimhashPageOpaque {
    BlockNumber next;  // next page of the chain, or InvalidBlockNumber
    uint16 nentries;   // entries (data, pending) or directory slots used
    uint16 flags;
    uint16 unused[3];
    uint16 page_id;    // SIMHASH_PAGE_ID
};

// One index entry: the full fingerprint and the heap TID (14 bytes on disk: data and pending pages
// store the fingerprints of a page contiguously, for the popcount loops, and the TIDs after them).
struct __attribute__((packed, aligned(2))) SimhashEntry {
    int64 fp;
    ItemPointerData tid;
};

// An entry of tables 1..m-1: the 32 bits of the fingerprint that follow the table's directory
// prefix (simhash_ref_key), and the position of the full entry in table 0 in the low bits of
// `pos`; a run with ref_tail_bits (SimhashTable) keeps that many more bits of the rotation, those
// after the key, in the bits of `pos` the position does not need (simhash_ref_position,
// simhash_ref_stored_tail).
struct SimhashRef {
    uint32 key;
    uint32 pos;
};

// Every simhash page has a special space of this size (simhash_init_page; simhash_check_page
// refuses any other), so its address is a constant offset: computing it does not wait for the
// page header's line, which matters where a batch of random pages is read ahead (fetch_entries).
#define SIMHASH_SPECIAL_OFFSET (BLCKSZ - MAXALIGN(sizeof(SimhashPageOpaque)))
#define SimhashPageGetOpaque(page) (reinterpret_cast<SimhashPageOpaque *>((page) + SIMHASH_SPECIAL_OFFSET))
#define SimhashPageGetRefs(page) (reinterpret_cast<SimhashRef *>(PageGetContents(page)))
#define SimhashPageGetMap(page) (reinterpret_cast<BlockNumber *>(PageGetContents(page)))
#define SIMHASH_PAGE_SPACE \
    (BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaque)))
#define SIMHASH_ENTRIES_PER_PAGE (SIMHASH_PAGE_SPACE / (sizeof(int64) + sizeof(ItemPointerData)))
#define SimhashPageGetFps(page) (reinterpret_cast<int64 *>(PageGetContents(page)))
// The TIDs grow down from the special space, the fingerprints up from the header, so the hole
// between pd_lower and pd_upper is exactly the free space: Generic WAL compares and full-page
// images carry only the entries.
inline ItemPointerData *simhash_page_tid(Page page, int i) {
    return reinterpret_cast<ItemPointerData *>(page + SIMHASH_SPECIAL_OFFSET) - 1 - i;
}
#define SIMHASH_REFS_PER_PAGE (SIMHASH_PAGE_SPACE / sizeof(SimhashRef))
#define SIMHASH_MAP_PER_PAGE (SIMHASH_PAGE_SPACE / sizeof(BlockNumber))
// A directory slot: where the first entry whose key prefix is >= the slot's prefix sits, so a
// probe reads that entry's page at that offset without searching (InvalidBlockNumber: none).
struct SimhashDirSlot {
    BlockNumber blkno;
    uint16 offset;
    uint16 unused;
};
#define SimhashPageGetDirSlots(page) (reinterpret_cast<SimhashDirSlot *>(PageGetContents(page)))
#define SIMHASH_DIRSLOTS_PER_PAGE (SIMHASH_PAGE_SPACE / sizeof(SimhashDirSlot))
// The page list of a run up to 1900 * 2038 pages: table 0 of 2.2 billion entries and its directories.
#define SIMHASH_MAX_MAP_PAGES 1900
// Directory pages of a table of `dirbits` prefix bits.
constexpr uint32 simhash_dir_pages(int dirbits) {
    return static_cast<uint32>(((uint64{1} << dirbits) + SIMHASH_DIRSLOTS_PER_PAGE - 1) / SIMHASH_DIRSLOTS_PER_PAGE);
}

// The entries of a data or pending page to read: its count, no more than a page holds (a damaged
// count must not take a reader past the page), and at most `limit`.
inline int simhash_page_entries(const SimhashPageOpaque *opaque, uint64 limit) {
    const uint64 on_page = Min(opaque->nentries, static_cast<uint16>(SIMHASH_ENTRIES_PER_PAGE));
    return static_cast<int>(Min(on_page, limit));
}

// A tombstone: VACUUM clears the offset of a dead entry's TID (table-0 positions must not move).
inline bool simhash_tid_is_dead(const ItemPointerData *tid) { return ItemPointerGetOffsetNumberNoCheck(tid) == 0; }

// Rows whose fingerprint is NULL are indexed too, because an ordered scan with no condition
// (ORDER BY fp <~> q LIMIT n) must return every row, NULLs last, as a sort would. Their TID
// carries SIMHASH_NULL_FLAG in its offset (heap offsets stay below 0x2000 for any block size) and
// their stored fingerprint is a hash of the TID, so that they spread over the blocks like random
// fingerprints instead of filling one bucket. No search condition matches them.
#define SIMHASH_NULL_FLAG 0x8000
inline bool simhash_tid_is_null(const ItemPointerData *tid) {
    return (ItemPointerGetOffsetNumberNoCheck(tid) & SIMHASH_NULL_FLAG) != 0;
}
// The heap TID of an entry (without the NULL flag).
inline ItemPointerData simhash_heap_tid(const ItemPointerData *tid) {
    ItemPointerData heap = *tid;
    ItemPointerSetOffsetNumber(&heap, ItemPointerGetOffsetNumberNoCheck(tid) & ~SIMHASH_NULL_FLAG);
    return heap;
}
// The entry of a row: (fp, tid), or for a NULL fingerprint (hash of the TID, flagged TID).
void simhash_entry_for(Datum value, bool isnull, ItemPointer heap_tid, int64 *fp, ItemPointerData *tid);

struct SimhashTable {
    BlockNumber first;   // first data page, or InvalidBlockNumber when the table is empty
    uint32 npages;       // data pages
    uint32 ndirpages;    // directory pages, listed in the run's page list after those of the tables before
    // Tables 1..m-1: bits of each entry's rotation after its key that its ref stores above the
    // position (simhash_choose_ref_tail_bits). 0 in runs written without them, whose refs read
    // as before.
    uint32 ref_tail_bits;
};

// The header page of a run: how to read its tables. Written once, never changed.
struct SimhashRunData {
    uint64 serial;      // 0 for the build's run, then the metapage's merge count: with the header's
                        // block number, names the run for backend caches
    uint64 nentries;    // entries in each table, tombstones included
    uint16 ntables;
    uint16 dirbits;     // table 0's directory bits (block 0 is the longest); table t's are at most
                        // its block's length (simhash_table_dirbits)
    uint32 nmappages;
    // The bit order of the run's keys (key bit j is fingerprint bit key_order.source[j]): the
    // writer chose it from the entries' bit statistics so that low-entropy bits spread over the
    // blocks; the identity for uniform data. Tables are sorted and cut by key. 64 bytes on disk.
    simhash::BitPermutation key_order;
    SimhashTable tables[SIMHASH_MAX_TABLES];
    BlockNumber map[SIMHASH_MAX_MAP_PAGES];  // the map pages, which hold the page list
};
#define SimhashPageGetRun(page) (reinterpret_cast<SimhashRunData *>(PageGetContents(page)))

// Where page d of table t's directory is named in the run's page list.
inline Size simhash_dir_list_index(const SimhashRunData *run, int t, Size d) {
    Size index = run->tables[0].npages;
    for (int i = 0; i < t; ++i) index += run->tables[i].ndirpages;
    return index + d;
}
// The ref_tail_bits of a run's refs (the same in each of its tables 1..m-1).
inline int simhash_run_ref_tail_bits(const SimhashRunData *run) {
    return run->ntables > 1 ? static_cast<int>(run->tables[1].ref_tail_bits) : 0;
}
// Entries of the page list: table 0's pages and every directory page.
inline Size simhash_page_list_length(const SimhashRunData *run) { return simhash_dir_list_index(run, run->ntables, 0); }

// A run as the metapage lists it: enough for the planner, the merge policy and VACUUM without
// reading the header.
struct SimhashRunSlot {
    uint64 serial;
    BlockNumber header;
    uint32 npages;        // every page of the run, the header included
    uint64 nentries;      // tombstones included
    uint64 ndead;         // tombstones
    uint32 table0_pages;
    uint16 ntables;
    uint16 dirbits;
    // Bits of entropy in each table's block (sum over its key bits, from the writer's sample,
    // at most the block's length): about log2 of the distinct block values, which the scan's
    // estimate needs for the entries a probe finds when the data is skewed.
    uint8 block_bits[SIMHASH_MAX_TABLES];
};

// Pages a merge replaced: a run (walked from its header) or a detached pending chain. They are
// recycled once no running snapshot is as old as `safexid`.
struct SimhashRetired {
    FullTransactionId safexid;
    BlockNumber head;
    uint32 npages;
    uint16 kind;  // SIMHASH_RUN or SIMHASH_PENDING
    uint16 unused[3];
};

struct SimhashMetaData {
    uint32 magic;
    uint32 version;
    uint16 ntables;       // the tables option's count when the index was built (4 for auto); every
                          // run carries its own, and this counts only while there is none
    uint16 unused;
    uint32 nruns;
    BlockNumber pending_head, pending_tail;
    uint64 npending;      // entries in the pending list
    uint32 npending_pages;
    BlockNumber merge_head, merge_tail;  // a pending list detached by a merge in progress
    uint32 nmerge_pages;
    uint64 nmerge;
    uint64 merges;        // runs written by merges since the build
    uint64 index_id;      // random, drawn when the index is built: names it in backend caches
    TimestampTz last_merge;
    uint32 nretired;
    uint32 pending_epoch;  // changes whenever a pending or merge list changes other than by appends
                           // (detached, tombstones set): backend copies of the lists are keyed by it
    SimhashRunSlot runs[SIMHASH_MAX_RUNS];  // largest first
    SimhashRetired retired[SIMHASH_MAX_RETIRED];
};

#define SimhashPageGetMeta(page) (reinterpret_cast<SimhashMetaData *>(PageGetContents(page)))

struct SimhashOptions {
    int32 vl_len_;
    int tables_offset;  // the tables option's string ("auto" or a count), 0 if not set
    int pending_limit;  // kB
};

// Geometry of the blocks (the layout of core/blocks.h): block i covers `len[i]` bits starting
// `shift[i]` bits below the MSB of a fingerprint's key, the fingerprint with its bits in the run's
// order (`permuter`, null for the identity). Every function below takes the fingerprint and
// applies the order itself.
struct SimhashGeometry {
    int ntables;
    int dirbits[SIMHASH_MAX_TABLES];  // each table's directory bits (simhash_table_dirbits)
    int len[SIMHASH_MAX_TABLES];
    int shift[SIMHASH_MAX_TABLES];
    const simhash::BitPermuter *permuter;
    int ref_tail_bits;    // the run's SimhashTable.ref_tail_bits (0 until simhash_set_ref_tail)
    uint32 ref_pos_mask;  // the bits of a ref's `pos` that hold the position
};

// fp's key under a run's bit order (null: the identity).
inline uint64 simhash_key(int64 fp, const simhash::BitPermuter *permuter) {
    return permuter ? permuter->key(static_cast<uint64>(fp)) : static_cast<uint64>(fp);
}
inline uint64 simhash_key(int64 fp, const SimhashGeometry *g) { return simhash_key(fp, g->permuter); }
inline uint32 simhash_block(int64 fp, const SimhashGeometry *g, int t) {
    return static_cast<uint32>((simhash_key(fp, g) << g->shift[t]) >> (64 - g->len[t]));
}
inline uint32 simhash_prefix(uint32 block, const SimhashGeometry *g, int t) {
    return block >> (g->len[t] - g->dirbits[t]);
}
// fp's key rotated so that block t is on top.
inline uint64 simhash_rotation(int64 fp, const SimhashGeometry *g, int t) {
    const uint64 x = simhash_key(fp, g);
    const int shift = g->shift[t];
    return shift ? (x << shift) | (x >> (64 - shift)) : x;
}
// Block t and a ref's key from table t's rotation (a spilled build sorts rotations, not fps).
inline uint32 simhash_rotation_block(uint64 rotation, const SimhashGeometry *g, int t) {
    return static_cast<uint32>(rotation >> (64 - g->len[t]));
}
inline uint32 simhash_rotation_ref_key(uint64 rotation, const SimhashGeometry *g, int t) {
    return static_cast<uint32>((rotation << g->dirbits[t]) >> 32);
}
// What a ref of table t stores: the 32 bits of the rotation below the directory prefix.
inline uint32 simhash_ref_key(int64 fp, const SimhashGeometry *g, int t) {
    return simhash_rotation_ref_key(simhash_rotation(fp, g, t), g, t);
}
// The bits of table t's rotation after its ref key that a ref stores with its position (0 bits: 0).
inline uint32 simhash_rotation_ref_tail(uint64 rotation, const SimhashGeometry *g, int t) {
    return g->ref_tail_bits > 0 ? static_cast<uint32>((rotation << (g->dirbits[t] + 32)) >> (64 - g->ref_tail_bits)) : 0;
}
// What a ref of table t holds for fp besides the position: its key and tail (one rotation).
struct SimhashRefBits {
    uint32 key;
    uint32 tail;
};
inline SimhashRefBits simhash_ref_bits(int64 fp, const SimhashGeometry *g, int t) {
    const uint64 rotation = simhash_rotation(fp, g, t);
    return SimhashRefBits{simhash_rotation_ref_key(rotation, g, t), simhash_rotation_ref_tail(rotation, g, t)};
}
// A ref's `pos`: what it holds as one word, and the two parts.
inline uint32 simhash_ref_word(uint32 position, uint32 tail, const SimhashGeometry *g) {
    return g->ref_tail_bits > 0 ? position | (tail << (32 - g->ref_tail_bits)) : position;
}
inline uint32 simhash_ref_position(uint32 word, const SimhashGeometry *g) { return word & g->ref_pos_mask; }
inline uint32 simhash_ref_stored_tail(uint32 word, const SimhashGeometry *g) {
    return g->ref_tail_bits > 0 ? word >> (32 - g->ref_tail_bits) : 0;
}
// The bits in which a ref's key and tail differ from a center's: a lower bound of the distance
// beyond the directory prefix.
inline int simhash_ref_distance(const SimhashRef &ref, const SimhashRefBits &center, const SimhashGeometry *g) {
    return simhash::popcount64(ref.key ^ center.key) + simhash::popcount64(simhash_ref_stored_tail(ref.pos, g) ^ center.tail);
}
// The bits of block t below its directory prefix, from a ref key (0 when the prefix is the block).
inline uint32 simhash_ref_subblock(uint32 key, const SimhashGeometry *g, int t) {
    const int bits = g->len[t] - g->dirbits[t];
    return bits > 0 ? key >> (32 - bits) : 0;
}
inline uint32 simhash_subblock(uint32 block, const SimhashGeometry *g, int t) {
    const int bits = g->len[t] - g->dirbits[t];
    return bits > 0 ? block & ((uint32{1} << bits) - 1) : 0;
}
inline int simhash_distance(int64 a, int64 b) {
    return simhash::hamming_distance(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
}

// simhash_am.cpp: options, pages, metapage, geometry
// The tables option: a count, or SIMHASH_AUTO_TABLES.
int simhash_tables_option(Relation index);
// The tables of a run of `entries` entries written under that option (core/blocks.h chooses for auto).
int simhash_run_tables(int tables_option, double entries);
// The tables ordered scans step their rings by: the largest run's.
int simhash_ring_tables(const SimhashMetaData *meta);
int simhash_pending_limit(Relation index);
void simhash_init_page(Page page, uint16 flags);
// A new metapage; its tables: the tables option's count, SIMHASH_DEFAULT_TABLES for auto.
void simhash_fill_metapage(Page page, int tables_option);
void simhash_check_page(Relation index, Page page, BlockNumber blkno, uint16 expected_flags);
// Refuses what is not an index that can hold entries: a missing relation (42P01), a partitioned
// index or another relation (42809). For the SQL functions that take an index argument.
void simhash_check_index_argument(Oid indexoid);
// For the SQL functions that open an index argument: refuses a relation of another access method
// (42809), and an unlogged index during recovery, as PostgreSQL refuses to read unlogged tables
// there (a standby has no main fork for it: reading one fails on the missing file).
void simhash_check_opened_index(Relation index);
SimhashMetaData *simhash_check_meta(Relation index, Page page);
// Copies the (checked) metapage into *meta under a share lock, released on return.
void simhash_read_meta(Relation index, SimhashMetaData *meta);
// For readers that copy the run lists and then read the runs (scans, simhash_index_runs): the
// metapage share-locked and checked. On a primary the lock goes once the lists are copied
// (simhash_meta_copied): runs are recycled only after every snapshot that saw the metapage. On a
// hot standby, whose snapshots hold nothing back on the primary, it stays until
// simhash_meta_release, holding back the replay of merges (see the top of this file). `held` is
// decided once, so that a promotion in between does not change how the buffer is released.
struct SimhashMetaReader {
    Buffer buffer;
    bool held;
};
const SimhashMetaData *simhash_meta_lock(Relation index, SimhashMetaReader *reader);
void simhash_meta_copied(SimhashMetaReader *reader);
void simhash_meta_release(SimhashMetaReader *reader);
// Whether a run header is well formed (geometry, directory and map page counts in range) and,
// given its metapage slot, the run the slot describes.
bool simhash_run_header_valid(const SimhashRunData *run, const SimhashRunSlot *slot);
// Copies the run header at block `header` into *run, checked (against `slot` unless null).
void simhash_read_run(Relation index, BlockNumber header, const SimhashRunSlot *slot, SimhashRunData *run);
// The run's page list (simhash_page_list_length entries), read from its map pages into a palloc'd
// array; a map page that is not one, or holds fewer entries than the list needs, is corruption.
BlockNumber *simhash_read_page_list(Relation index, const SimhashRunData *run);
// Entries in the runs (tombstones excluded) and pages of the runs.
uint64 simhash_run_entries(const SimhashMetaData *meta);
uint64 simhash_run_pages(const SimhashMetaData *meta);
// Pages the metapage accounts for: itself, the runs, both pending lists and the retired sets.
uint64 simhash_pages_in_use(const SimhashMetaData *meta);
// The identity bit order; a run's own order comes with its cached header (simhash_cached_run) or
// from simhash_new_permuter(run->key_order).
void simhash_geometry(int ntables, int dirbits, SimhashGeometry *g);
// Table t's directory bits in a run of `ntables` tables whose table 0 has `dirbits`: at most the
// block's length (a longer directory would split a block value over several slots).
int simhash_table_dirbits(int ntables, int dirbits, int t);
// The geometry of a run as its header describes it (its tables, directory and ref tails; the
// permuter is the caller's).
void simhash_run_geometry(const SimhashRunData *run, SimhashGeometry *g);
// A permuter for `order`, allocated in the current memory context; null for the identity.
const simhash::BitPermuter *simhash_new_permuter(const simhash::BitPermutation &order);
// Table 0's directory bits for a run of `nentries` entries in `ntables` tables.
int simhash_choose_dirbits(int ntables, uint64 nentries);
// Rotation bits after the key that the refs of a run of `nentries` entries keep beside their
// positions: what the 32-bit word leaves once the position has its bits.
int simhash_choose_ref_tail_bits(int dirbits, uint64 nentries);
// g's ref layout: `tail_bits` as the run's header has them.
void simhash_set_ref_tail(SimhashGeometry *g, int tail_bits);
Buffer simhash_new_buffer(Relation index, bool use_fsm);
// The flags of page `blkno` (0 for a new, never initialized page), read under a share lock.
uint16 simhash_page_flags(Relation index, BlockNumber blkno);
// Reads and locks (`mode`) page `blkno`, checking its page ID and that it has one of `flags`.
Page simhash_lock_page(Relation index, BlockNumber blkno, int mode, uint16 flags, Buffer *buffer);
// Appends an entry to a data or pending page image (the caller checks it has room).
void simhash_page_append(Page page, int64 fp, const ItemPointerData *tid);
// Sets pd_lower / pd_upper of a data or pending page around its `n` entries.
void simhash_page_set_bounds(Page page, int n);
// Sets the metapage's pd_lower to the end of its retired sets (the last variable part), so that
// Generic WAL compares only what is in use.
void simhash_meta_set_lower(Page page);

// build.cpp: collecting entries and writing runs (shared by ambuild and merges)
struct SimhashEntryArray {
    SimhashEntry *items;  // palloc'd (huge)
    Size n;
    Size capacity;
};
void simhash_array_push(SimhashEntryArray *a, int64 fp, ItemPointer tid);
// Collects entries within a memory budget: in memory (sorted by counting sorts) while 36 bytes per
// entry fit the budget, else through tuplesorts (spilling to disk).
struct SimhashSorter;
// `expected` (entries, or <= 0 if unknown) sizes the in-memory array up front. `tables_option`:
// the run's tables, or SIMHASH_AUTO_TABLES to choose them from the entries' count when their key
// order is chosen (when the run is written, or when the entries spill: then from the larger of
// the entries so far and `expected`).
SimhashSorter *simhash_sorter_begin(int tables_option, int budget_kb, double expected);
void simhash_sorter_add(SimhashSorter *s, int64 fp, ItemPointer tid);
Size simhash_sorter_count(const SimhashSorter *s);
bool simhash_sorter_spilled(const SimhashSorter *s);
void simhash_sorter_end(SimhashSorter *s);
// Writes the sorter's entries (at least one) as a new run: its tables, directories, map pages and,
// last, its header page; fills *slot. `logged` = write through Generic WAL and reuse FSM pages
// (merges); otherwise (build) write pages directly after the last block and WAL-log them with
// log_newpages. `progress` reports PROGRESS_CREATEIDX_TUPLES_*.
void simhash_write_run(Relation index, SimhashSorter *s, bool logged, bool progress, uint64 serial, SimhashRunSlot *slot);

// run_cache.cpp: runs never change once written, so each backend keeps their headers, page lists
// and directories after the first scan that reads them, keyed by the metapage's index_id, the
// relation file, header block and serial. Directory and map pages are copied a page at a time,
// when a probe or fetch first needs them (simhash_cached_dir_slot): a query reads the directory
// pages of its own probes, not every run's whole directory (up to 32 MB a table).
// The result is valid until the next call.
struct SimhashCachedRun {
    const SimhashRunData *run;
    const simhash::BitPermuter *permuter;  // the run's key order, null for the identity
    SimhashDirSlot **dir[SIMHASH_MAX_TABLES];  // per table and directory page: its slots, or null until copied
    BlockNumber *pages;                        // the page list, filled a map page at a time
    uint8 *map_loaded;                         // a bit per map page: its page numbers are in pages
};
void simhash_cached_run(Relation index, uint64 index_id, const SimhashRunSlot *slot, SimhashCachedRun *out);
// The directory slot of `prefix` in table t of a cached run if its page has been copied, else null.
inline const SimhashDirSlot *simhash_copied_dir_slot(const SimhashCachedRun *cached, int t, Size prefix) {
    const SimhashDirSlot *page = cached->dir[t][prefix / SIMHASH_DIRSLOTS_PER_PAGE];
    return page ? page + prefix % SIMHASH_DIRSLOTS_PER_PAGE : nullptr;
}
// The directory slot of `prefix` (< 2^dirbits) in table t of a cached run; copies its page first
// when no probe of this backend has needed it yet. Only for a run of the scan's own run list (its
// pages cannot be recycled while the scan runs).
const SimhashDirSlot *simhash_cached_dir_slot(Relation index, const SimhashCachedRun *cached, int t, Size prefix);
// The block of page `page_index` of a cached run's table 0 (from its page list, read once per
// backend like the directory's): a fetch from table 0 costs an array lookup, not a map page lock.
BlockNumber simhash_cached_table0_block(Relation index, const SimhashCachedRun *cached, Size page_index);

// copy_cache.cpp: backend copies of the unsorted lists (the pending list, a list being merged) and
// of small runs' table 0, with the buckets of src/core/block_buckets.h over them, so that a query
// at a small radius probes a few buckets in memory instead of reading every list page and probing
// every small run's tables page by page. A list only grows by appends until a detach, a finished
// merge or a VACUUM changes the metapage's pending_epoch; a run never changes but for tombstones,
// which VACUUM counts in its slot's ndead before the heap can reuse their TIDs. So a copy is keyed
// by what changes when it must be read again, and brought up to date by reading only what was
// appended since the last call. Null when too large to copy (the scan reads the pages). Valid
// until the next call.
struct SimhashCachedChain {
    const uint64 *fps;
    const ItemPointerData *tids;
    const simhash::BlockBuckets *buckets;
};
const SimhashCachedChain *simhash_cached_list(Relation index, uint64 index_id, uint32 epoch, BlockNumber head,
                                              uint64 nentries);
const SimhashCachedChain *simhash_cached_run_entries(Relation index, uint64 index_id, const SimhashRunSlot *slot,
                                                     const SimhashRunData *run);
// A batch search's own copy of a list the cache does not take (over 524,288 entries: a merge
// list grows that long when merges cannot retire pages under an old snapshot, as during a long
// bulk load), in the current memory context: read once, instead of once for each center.
const SimhashCachedChain *simhash_batch_list_copy(Relation index, BlockNumber head, uint64 nentries);
// ReadBuffer for a scan's random probes: remembers where each page was found and pins it there
// again with ReadRecentBuffer, skipping the shared buffer mapping lookup (with gigabytes of
// shared_buffers, a few cache misses and a partition lock per page). A backend that has missed
// many hints fills them for the index's pages from the buffer headers in one pass.
Buffer simhash_read_buffer_hinted(Relation index, BlockNumber blkno);
// Asks for the hint of page `blkno` (the line the two calls below read).
void simhash_prefetch_buffer_hint(Relation index, BlockNumber blkno);
// Asks for the header of the buffer the hint names for page `blkno` (the line pinning it touches).
void simhash_prefetch_buffer_header(Relation index, BlockNumber blkno);
// Makes room for the hints of an index of `pages` pages (up to 2^21 hints, 24 MB of backend
// memory; 1.5 MB until a search of an index over 1 GB asks): a query's probes and a bulk load's
// batch search land anywhere in the index.
void simhash_reserve_buffer_hints(uint64 pages);
// Marks the start of a scan: copies it uses are not dropped to make room for its others.
void simhash_copy_cache_scan_begins();

// vacuum.cpp
// Writes the pending list out as a new run and merges runs by size tiers until the policy is
// satisfied; recycles retired pages whose snapshots are gone and returns how many it freed.
// For VACUUM (`vacuum`) it waits for a running merge and also rewrites the runs a fifth dead;
// otherwise (an insert) it returns at once if another merge is running. Serialized by a
// heavyweight lock on the metapage.
BlockNumber simhash_merge(Relation index, bool vacuum);
extern int simhash_debug_merge_crash_step;
// simhash.debug_pause_lock: when set, waits until the advisory lock of that key
// (pg_advisory_lock(key)) is free. Scans wait after copying the metapage's lists, merges after
// detaching the pending list, so that concurrency tests can interleave them exactly.
extern int simhash_debug_pause_lock;
void simhash_debug_pause();
// Frees the pages a crashed merge left unreachable and returns deleted pages to the FSM; returns
// the number of pages freed. Takes the merge lock.
BlockNumber simhash_reclaim_unreachable_pages(Relation index);
// Every page of a run, its header included.
void simhash_collect_run_pages(Relation index, BlockNumber header, void (*visit)(BlockNumber, void *), void *arg);
// Every page of a retired set (a run, or a detached pending chain).
void simhash_visit_retired(Relation index, const SimhashRetired *retired, void (*visit)(BlockNumber, void *), void *arg);

// The expected work of one scan of `radius` over one run, by both strategies: probing every block
// value within simhash::block_probe_radius bits in each table, or reading table 0 in full. The scan runs the
// cheaper one and the planner is given the cost of that one, so the two never disagree and the
// cost never falls as the radius grows (both strategies' costs grow with it).
struct SimhashScanEstimate {
    bool full_scan;   // the strategy the scan will use
    double probes;    // block values probed, all tables
    double pages;     // pages the chosen strategy reads
    double io_cost;   // planner cost of those pages
    double cpu_cost;  // planner cost of the chosen strategy's work, from its expected time
};
// random_page_cost and seq_page_cost are the index tablespace's: probes read pages at random,
// table 0 is read in chain order.
void simhash_estimate_scan(const SimhashRunSlot *run, int radius, double random_page_cost, double seq_page_cost,
                           SimhashScanEstimate *estimate);
extern int simhash_max_probes;

// scan.cpp: the radius of an ordered scan's ring after the ring of radius `done` (-1 for the
// first). Rings end where the per-block radius of a probe would grow (tables - 1, 2 * tables - 1,
// ...), so each costs about what a query of its radius costs; past 24 bits, where every run is
// read in full anyway, they double, up to 64.
int simhash_next_ring_radius(int done, int ntables);

// scan.cpp: a search for a whole batch of centers at one radius, for bulk loads. Calls
// found(context, i, heap_tid) for index entries within `radius` bits of centers[i] (an entry may
// be reported more than once for one center; entries of NULL fingerprints never), searching each
// structure once for the batch: the probes of a large run in (table, block value) order across all
// centers, so that consecutive probes read neighbouring pages; lists and small runs through their
// backend copies. Not a scan: no snapshot applies, the caller checks the heap rows' visibility (an
// active snapshot must hold back the recycling of the runs, as a scan's does). With `have` (n
// flags, or null), a center whose flag is set is searched no further and a center's flag is set
// when an entry is reported for it: for a caller that needs one entry a center, and searches again
// (without `have`) the centers whose entries all turn out invisible.
typedef void (*SimhashBatchFound)(void *context, Size center, ItemPointer heap_tid);
void simhash_search_batch(Relation index, const int64 *centers, Size n, int radius, SimhashBatchFound found,
                          void *context, uint8 *have);


// AM callbacks
extern "C" {
IndexBuildResult *simhash_ambuild(Relation heap, Relation index, IndexInfo *indexInfo);
void simhash_ambuildempty(Relation index);
bool simhash_aminsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid, Relation heap,
                      IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo);
IndexBulkDeleteResult *simhash_ambulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
                                            IndexBulkDeleteCallback callback, void *callback_state);
IndexBulkDeleteResult *simhash_amvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);
void simhash_amcostestimate(PlannerInfo *root, IndexPath *path, double loop_count, Cost *indexStartupCost,
                            Cost *indexTotalCost, Selectivity *indexSelectivity, double *indexCorrelation,
                            double *indexPages);
bool simhash_amvalidate(Oid opclassoid);
void simhash_amadjustmembers(Oid opfamilyoid, Oid opclassoid, List *operators, List *functions);
bool simhash_amproperty(Oid index_oid, int attno, IndexAMProperty prop, const char *propname, bool *res, bool *isnull);
IndexScanDesc simhash_ambeginscan(Relation index, int nkeys, int norderbys);
void simhash_amrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys);
bool simhash_amgettuple(IndexScanDesc scan, ScanDirection dir);
int64 simhash_amgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);
void simhash_amendscan(IndexScanDesc scan);
}
static_assert(sizeof(SimhashEntry) == 14, "14-byte entries in memory");
static_assert(sizeof(SimhashPageOpaque) == MAXALIGN(sizeof(SimhashPageOpaque)), "page ID at the end of the page");
static_assert(sizeof(SimhashMetaData) <= SIMHASH_PAGE_SPACE, "metapage fits");
static_assert(sizeof(SimhashRunData) <= SIMHASH_PAGE_SPACE, "run header fits");
