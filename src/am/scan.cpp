// Scans: a bitmap scan collects every matching TID into the bitmap in one call; a tuple scan
// collects them structure by structure (lists and runs), returning what it has once a structure
// read from its pages gave matches, so that a caller that wants one row stops early; no page lock
// is kept between calls. The scan copies the metapage's lists (runs, pending list, list being
// merged) under a share lock and releases it: the runs it copied stay readable until it ends,
// because a merge retires replaced pages with a transaction ID that this scan's snapshot holds back
// from recycling. On a hot standby the metapage stays share-locked while the scan reads (see
// simhash_am.h), and a tuple scan collects everything in its first call.
//
// With radius r = m q + a (m tables, 0 <= a < m), a fingerprint within r bits of the query has one
// of its first a + 1 blocks within q bits or one of the others within q - 1 (the refined
// pigeonhole, see core/blocks.h): rb[t]. In every run, table t is probed with every block value
// within rb[t] bits of the query's block t (not at all where rb[t] < 0); in tables 1..m-1 the 32
// stored bits must be within r of the query's before the entry is fetched from table 0; a
// candidate is verified on the full 64 bits and accepted only from the first table t whose block
// is within rb[t], so each row comes back once. Where the probes would cost more than reading the run's table 0,
// the scan reads that table in full. Tombstones (dead entries VACUUM marked) are skipped.
//
// An ordered scan (ORDER BY fp <~> q, exact k-nearest neighbours as multi-index hashing finds
// them) returns rings of growing radius around q, each sorted by (distance, heap TID) before the
// next is searched, so the first n rows returned are exactly the n nearest, ties in TID order.
// Rings are one bit wide, searched in epochs: an epoch's ball of radius F (the rings step by the
// largest run's tables, so that each epoch adds one bit to every table's per-block radius) is
// searched ring by ring. Ring R probes the block values that the pigeonhole for R adds to those of
// ring R - 1 (one table's values one bit further, see block_probe_radius), keeps every entry
// within F (the lists and copies are searched for F once) and returns those within R: the
// search stops at the ring that holds the rows the caller wants, instead of at the epoch's edge,
// whose ball may cost several times as much (each bit of per-block radius multiplies the probes).
// An entry found by a ring's probes is emitted unless an earlier ring's probes covered it (a
// table whose block lies within that ring's per-block radius) or an earlier table of this ring's
// does, so each row comes once.
#include <algorithm>
#include <cmath>

#include "am/simhash_am.h"
#include "core/blocks.h"
#include "core/slot_sweep.h"
#include "core/value_groups.h"
#include "hamming_ball.h"
#include "guard.h"

extern "C" {
#include "access/itup.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/shm_toc.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"
}

namespace {

// A row of an ordered scan: its distance to the ORDER BY fingerprint (kNullDistance for a NULL
// fingerprint or a NULL ORDER BY argument) and heap TID.
constexpr uint16 kNullDistance = 65;
struct OrderedItem {
    ItemPointerData tid;
    uint16 distance;
    uint32 arrival;  // which row of the ring's later-key distances is this item's (see below)
};

// Where a search stands between the calls of a tuple scan (see search()): the metapage's lists
// as it copied them, and which of them it has searched.
struct SearchProgress {
    MemoryContext context;  // where runs and run_done live
    bool may_stop;          // a tuple scan: return after a structure read from pages that matched
    bool begun;
    bool finished;
    BlockNumber list_heads[2];  // the pending list, the list being merged
    uint64 list_entries[2];
    bool list_done[2];
    uint32 epoch;
    uint64 index_id;
    uint32 nruns;
    SimhashRunSlot *runs;
    bool *run_done;
    int *run_ring;  // an ordered scan's epoch: the ring each probed run's probes cover (-1: none yet)
};

void search_progress_free(SearchProgress *p) {
    if (p->runs) pfree(p->runs);
    if (p->run_done) pfree(p->run_done);
    if (p->run_ring) pfree(p->run_ring);
    p->runs = nullptr;
    p->run_done = nullptr;
    p->run_ring = nullptr;
}

struct ProbeQuery;

struct ScanOpaque {
    ItemPointerData *tids;
    Size ntids;
    Size capacity;
    Size next;
    ProbeQuery *query;      // a tuple scan's query, from its first call after a (re)scan; or null
    SearchProgress search;  // and its search
    MemoryContext context;  // where the TID and item arrays live (the scan's context)
    // Ordered scans (ORDER BY fp <~> q) return rows ring by ring: all rows at distance
    // (done_radius, ring radius], sorted by (distance, later ORDER BY distances, TID), then the
    // next ring. items[0 .. ring_end) is the ring being returned; items[ring_end .. nitems) the
    // rows of the epoch's later rings found so far.
    bool ordered;
    bool order_null;    // the ORDER BY argument is NULL: every distance is NULL
    int64 order_center;
    int done_radius;    // rows within it have been returned; -1 before the first ring
    int ring_tables;    // rings step by the largest run's tables, read once per scan (not per rescan:
                        // a LATERAL top-k rescans for every outer row; the count only sets the steps)
    bool exhausted;     // the ring of radius 64 (and the NULL rows) has been returned
    int epoch_radius;   // F, the radius of the epoch's ball
    ProbeQuery *epoch;          // the epoch's query (its ball, radius F), kept between its rings
    SearchProgress epoch_search;  // and the structures it searches, copied at its first ring
    OrderedItem *items;
    Size nitems;
    Size ring_end;
    Size items_capacity;
    Size narrived;         // items emitted in this epoch: rows of later_distances
    Size later_capacity;   // rows later_distances has room for
    // ORDER BY fp <~> a, fp <~> b, ...: the later keys' centers, and each item's distances to
    // them (nlater a row, in arrival order). A ring holds every row whose first distance lies in
    // its range, so sorting a ring by all distances orders the whole scan by all of them.
    int nlater;
    int64 *later_centers;
    bool *later_nulls;
    uint16 *later_distances;  // a row an item emitted in the epoch, by arrival
    IndexTuple empty_itup;  // see provide_index_tuple
};

// A (table, block value) pair to probe, for the center `center` of a batch (0 for a query), whose
// fingerprint is `fp` (kept here: the batch's probes reach their centers in random order).
struct Wanted {
    uint32 value;
    uint16 table;
    uint32 center;
    int64 fp;
};

// A ref put aside by an ordered scan's ring: its table-0 position, the lower bound of its
// distance that its key gives, and the run, table and ring of the probe that selected it.
struct PutAside {
    uint32 position;
    uint32 run;
    uint8 table;
    uint8 bound;
    uint8 ring;
};

struct ProbeQuery {
    int nkeys;
    int64 center[INDEX_MAX_KEYS + 1];  // the scan keys' balls, and an ordered scan's ring
    int radius[INDEX_MAX_KEYS + 1];    // clamped to 0..64
    SimhashGeometry g;
    uint32 qblock[SIMHASH_MAX_TABLES];
    SimhashRefBits qref[SIMHASH_MAX_TABLES];  // what a ref of each table holds for the probing center
    int primary;                      // the key whose ball the probes cover (the smallest)
    int r;                            // probing radius (the primary ball's): candidates within it are kept
    int rb[SIMHASH_MAX_TABLES];       // per-block radius of each table; -1: not probed
    // An ordered scan's epoch probes its ball ring by ring (rings): the probes of ring `ring`
    // cover it alone; rb_before: the per-block radii earlier rings probed in this run (their
    // entries were emitted then).
    bool rings;
    int ring;
    int first_ring;  // the epoch's
    int rb_before[SIMHASH_MAX_TABLES];
    bool read_after_rings;  // reading in full a run that earlier rings probed: skip what they found
    uint32 run_index;       // the run being probed, in the search's list
    // Refs a ring's probes selected whose 32-bit key puts them beyond the ring (but within the
    // ball): fetched from table 0 by the ring that reaches their bound, or never.
    PutAside *aside;
    Size naside;
    Size aside_capacity;
    SimhashCachedRun cached_run;      // the run being probed and its directories (backend cache)
    TIDBitmap *tbm;     // bitmap scans
    uint64 *tbm_batch;  // TIDs for the bitmap not yet added (block << 16 | offset), see add_to_bitmap
    uint64 *tbm_scratch;  // the batch's radix sort buffer, as large
    Size tbm_batched;
    Size tbm_capacity;
    ScanOpaque *so;     // tuple scans
    int64 found;
    bool with_nulls;    // also emit the entries of NULL fingerprints (a scan with no condition)
    // A batch search (simhash_search_batch): entries go to batch_found for center batch_center.
    SimhashBatchFound batch_found;
    void *batch_context;
    Size batch_center;
    // A batch that needs one entry a center (simhash_search_batch's `found`): the centers that
    // have one, searched no further.
    uint8 *batch_have;
    // In a parallel sweep, the flags both processes set and read (batch_have stays the leader's).
    uint8 *batch_shared_have;
    // A sweep stops between slots once batch_full is set (a parallel worker's results are full).
    bool batch_full;
};

// Room for one more element in a scan's growing array.
template <typename T>
void reserve_one(T **array, Size used, Size *capacity, MemoryContext context) {
    if (used < *capacity) return;
    *capacity = *capacity ? *capacity * 2 : 64;
    *array = static_cast<T *>(*array ? repalloc_huge(*array, *capacity * sizeof(T))
                                     : MemoryContextAllocHuge(context, *capacity * sizeof(T)));
}

// `fp` is unused for the rows of NULL fingerprints (`null_fp`), whose every distance is NULL.
void emit_ordered(ProbeQuery *q, const ItemPointerData *tid, uint16 distance, int64 fp, bool null_fp) {
    ScanOpaque *so = q->so;
    reserve_one(&so->items, so->nitems, &so->items_capacity, so->context);
    if (so->nlater > 0 && so->narrived >= so->later_capacity) {
        so->later_capacity = so->later_capacity ? so->later_capacity * 2 : 64;
        const Size bytes = so->later_capacity * so->nlater * sizeof(uint16);
        so->later_distances = static_cast<uint16 *>(
            so->later_distances ? repalloc_huge(so->later_distances, bytes) : MemoryContextAllocHuge(so->context, bytes));
    }
    if (so->narrived >= PG_UINT32_MAX)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("an ordered simhash index scan cannot hold more than %u rows at one distance", PG_UINT32_MAX)));
    OrderedItem &item = so->items[so->nitems];
    item.tid = *tid;
    item.distance = distance;
    item.arrival = static_cast<uint32>(so->narrived);
    if (so->nlater > 0) {
        uint16 *row = so->later_distances + so->narrived * so->nlater;
        for (int k = 0; k < so->nlater; ++k)
            row[k] = null_fp || so->later_nulls[k] ? kNullDistance
                                                   : static_cast<uint16>(simhash_distance(fp, so->later_centers[k]));
    }
    so->nitems++;
    so->narrived++;
}

// TIDs reach the bitmap in batches sorted by heap block. tbm_add_tuples looks a page's entry up
// once for consecutive TIDs on the same page; in the index's order the pages are random, and each
// TID costs a hash lookup that usually misses the CPU caches (~115 ns a TID at 100M rows, most of
// a large ball's bitmap scan). A batch and its sort's scratch take at most work_mem, as much
// again as the bitmap may.
constexpr Size kSortedBatchMin = 256;  // fewer TIDs are added in the order they came

constexpr Size kWideDigitBatch = 65536;  // from here on 16-bit digits (fewer passes), below 8-bit

// LSD radix sort of packed TIDs by block; returns the sorted buffer. A small batch sorts by 8-bit
// digits: clearing and summing the 65,536 counters of a 16-bit digit costs more than sorting a
// few thousand TIDs (300 TIDs: 44 us against 2 us); a large one by 16-bit digits, two passes
// instead of three or four (262,144 TIDs: 1.0 ms against 1.2 ms). A digit every TID shares is skipped.
uint64 *sort_by_block(uint64 *tids, uint64 *scratch, Size n) {
    const int bits = n < kWideDigitBatch ? 8 : 16;
    const Size buckets = Size{1} << bits;
    uint32 *count = static_cast<uint32 *>(palloc(buckets * sizeof(uint32)));
    for (int shift = 16; shift < 48; shift += bits) {
        memset(count, 0, buckets * sizeof(uint32));
        for (Size i = 0; i < n; ++i) count[(tids[i] >> shift) & (buckets - 1)]++;
        if (count[(tids[0] >> shift) & (buckets - 1)] == n) continue;
        uint32 sum = 0;
        for (Size d = 0; d < buckets; ++d) {
            const uint32 c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (Size i = 0; i < n; ++i) scratch[count[(tids[i] >> shift) & (buckets - 1)]++] = tids[i];
        std::swap(tids, scratch);
    }
    pfree(count);
    return tids;
}

void flush_to_bitmap(ProbeQuery *q) {
    const Size n = q->tbm_batched;
    if (n == 0) return;
    uint64 *packed = n >= kSortedBatchMin ? sort_by_block(q->tbm_batch, q->tbm_scratch, n) : q->tbm_batch;
    // Unpacked in place: TID i (6 bytes) lands at or before packed TID i (8 bytes), which is read first.
    ItemPointerData *tids = reinterpret_cast<ItemPointerData *>(packed);
    for (Size i = 0; i < n; ++i) {
        const uint64 tid = packed[i];
        ItemPointerSet(&tids[i], static_cast<BlockNumber>(tid >> 16), static_cast<OffsetNumber>(tid & 0xFFFF));
    }
    tbm_add_tuples(q->tbm, tids, static_cast<int>(n), false);
    q->tbm_batched = 0;
}

void add_to_bitmap(ProbeQuery *q, ItemPointer tid) {
    if (q->tbm_batched == q->tbm_capacity) {
        const Size limit = Max(static_cast<Size>(work_mem) * 1024 / (2 * sizeof(uint64)), kSortedBatchMin);
        if (q->tbm_capacity >= limit) {
            flush_to_bitmap(q);
        } else {
            q->tbm_capacity = Min(q->tbm_capacity ? q->tbm_capacity * 2 : 64, limit);
            const Size bytes = q->tbm_capacity * sizeof(uint64);
            q->tbm_batch = static_cast<uint64 *>(q->tbm_batch ? repalloc_huge(q->tbm_batch, bytes)
                                                              : MemoryContextAllocHuge(CurrentMemoryContext, bytes));
            q->tbm_scratch = static_cast<uint64 *>(q->tbm_scratch ? repalloc_huge(q->tbm_scratch, bytes)
                                                                  : MemoryContextAllocHuge(CurrentMemoryContext, bytes));
        }
    }
    q->tbm_batch[q->tbm_batched++] =
        (static_cast<uint64>(ItemPointerGetBlockNumberNoCheck(tid)) << 16) | ItemPointerGetOffsetNumberNoCheck(tid);
}

void emit_unordered(ProbeQuery *q, ItemPointer tid) {
    if (q->tbm) {
        add_to_bitmap(q, tid);
        return;
    }
    ScanOpaque *so = q->so;
    reserve_one(&so->tids, so->ntids, &so->capacity, so->context);
    so->tids[so->ntids++] = *tid;
}

// An entry of a batch search within the radius of center `center`: to the caller, and the
// center marked as having one where the caller needs only one.
void emit_batch(ProbeQuery *q, Size center, ItemPointer tid) {
    if (simhash_tid_is_null(tid)) return;
    q->found++;
    if (q->batch_have) q->batch_have[center] = 1;
    if (q->batch_shared_have) q->batch_shared_have[center] = 1;
    q->batch_found(q->batch_context, center, tid);
}

// An entry that satisfies every key: to the bitmap, the TID list, the ring being collected, or a
// batch search's caller.
void emit(ProbeQuery *q, ItemPointer tid, int64 fp) {
    if (q->batch_found) {
        emit_batch(q, q->batch_center, tid);
        return;
    }
    const bool ordered = q->so && q->so->ordered;
    if (simhash_tid_is_null(tid)) {  // its fingerprint is a stand-in that matched by chance
        if (!q->with_nulls) return;
        ItemPointerData heap_tid = simhash_heap_tid(tid);
        q->found++;
        if (ordered)
            emit_ordered(q, &heap_tid, kNullDistance, 0, true);
        else
            emit_unordered(q, &heap_tid);
        return;
    }
    if (ordered) {
        ScanOpaque *so = q->so;
        const uint16 distance =
            so->order_null ? kNullDistance : static_cast<uint16>(simhash_distance(fp, so->order_center));
        if (!so->order_null && distance <= so->done_radius) return;  // returned by an earlier ring
        q->found++;
        emit_ordered(q, tid, distance, fp, false);
        return;
    }
    q->found++;
    emit_unordered(q, tid);
}

inline bool matches(const ProbeQuery *q, int64 fp) {
    for (int k = 0; k < q->nkeys; ++k)
        if (simhash_distance(fp, q->center[k]) > q->radius[k]) return false;
    return true;
}

// Whether an ordered scan's earlier rings found fp in the run of q->g (one of its blocks within
// the per-block radius they probed): it was emitted then.
inline bool found_by_earlier_rings(const ProbeQuery *q, int64 fp) {
    for (int u = 0; u < q->g.ntables; ++u)
        if (simhash::popcount64(simhash_block(fp, &q->g, u) ^ q->qblock[u]) <= q->rb_before[u]) return true;
    return false;
}

// Pins page `blkno` and asks for its special space and `lines` cache lines from byte
// `offset` of its contents, so that they arrive while the caller works on the page before it
// (index pages lie anywhere in shared buffers, and each first touch would otherwise stall).
Buffer read_ahead(Relation index, BlockNumber blkno, Size offset, int lines) {
    Buffer buffer = simhash_read_buffer_hinted(index, blkno);
    Page page = BufferGetPage(buffer);
    __builtin_prefetch(SimhashPageGetOpaque(page));
    for (int line = 0; line < lines; ++line) __builtin_prefetch(PageGetContents(page) + offset + 64 * line);
    return buffer;
}

// The first `limit` entries of a chain (pending list, list being merged, or a run's table 0),
// verified in full; the next page is read ahead while this one's fingerprints are compared. A
// list's limit is its entry count as the scan copied it from the metapage: a merge that detaches
// the pending list while the scan reads links it behind the list being merged, and a walk to the
// chain's end would read the pending list's entries twice (once as each list). Entries appended
// after the copy are not the scan's to see: their transactions could not have committed before
// its snapshot was taken (the snapshot precedes the metapage read).
void scan_chain(Relation index, ProbeQuery *q, BlockNumber blkno, uint16 flags, uint64 limit) {
    Buffer ahead = InvalidBuffer;
    uint64 read = 0;
    while (blkno != InvalidBlockNumber && read < limit) {
        CHECK_FOR_INTERRUPTS();
        Buffer buffer = BufferIsValid(ahead) ? ahead : ReadBuffer(index, blkno);
        ahead = InvalidBuffer;
        LockBuffer(buffer, BUFFER_LOCK_SHARE);
        Page page = BufferGetPage(buffer);
        simhash_check_page(index, page, blkno, flags);
        const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        const int n = simhash_page_entries(opaque, limit - read);
        read += n;
        if (opaque->next != InvalidBlockNumber && read < limit) ahead = read_ahead(index, opaque->next, 0, 8);
        const int64 *fps = SimhashPageGetFps(page);
        if (q->nkeys == 1) {  // the common case: one POPCNT per fingerprint, contiguous
            uint32 hits[SIMHASH_ENTRIES_PER_PAGE];
            const Size nhits = simhash::select_within_radius(reinterpret_cast<const uint64_t *>(fps), n,
                                                             static_cast<uint64_t>(q->center[0]), q->radius[0], hits);
            for (Size h = 0; h < nhits; ++h) {
                ItemPointerData tid = *simhash_page_tid(page, static_cast<int>(hits[h]));
                if (q->read_after_rings && found_by_earlier_rings(q, fps[hits[h]])) continue;
                if (!simhash_tid_is_dead(&tid)) emit(q, &tid, fps[hits[h]]);
            }
        } else {
            for (int i = 0; i < n; ++i)
                if (matches(q, fps[i]) && !(q->read_after_rings && found_by_earlier_rings(q, fps[i]))) {
                    ItemPointerData tid = *simhash_page_tid(page, i);
                    if (!simhash_tid_is_dead(&tid)) emit(q, &tid, fps[i]);
                }
        }
        blkno = opaque->next;
        UnlockReleaseBuffer(buffer);
    }
}

// Entries from a backend copy (copy_cache.cpp), through its buckets.
struct CopySearch {
    ProbeQuery *q;
    const SimhashCachedChain *copy;
};

void visit_copy_entry(uint32_t i, void *context) {
    const CopySearch *s = static_cast<const CopySearch *>(context);
    if (s->q->nkeys > 1 && !matches(s->q, static_cast<int64>(s->copy->fps[i]))) return;
    ItemPointerData tid = s->copy->tids[i];
    emit(s->q, &tid, static_cast<int64>(s->copy->fps[i]));
}

void search_copy(ProbeQuery *q, const SimhashCachedChain *copy) {
    CopySearch search{q, copy};
    simhash::block_buckets_search(copy->buckets, copy->fps, static_cast<uint64>(q->center[q->primary]), q->r,
                                  visit_copy_entry, &search);
}

// A candidate whose block t equals the probed value: verify, deduplicate, emit.
void consider(Relation index, ProbeQuery *q, int t, const SimhashEntry &candidate) {
    const int64 fp = candidate.fp;
    if (!matches(q, fp)) return;
    ItemPointerData tid = candidate.tid;
    if (simhash_tid_is_dead(&tid)) return;
    for (int u = 0; u < t; ++u)  // found by an earlier table: returned there
        if (simhash::popcount64(simhash_block(fp, &q->g, u) ^ q->qblock[u]) <= q->rb[u]) return;
    if (q->rings && found_by_earlier_rings(q, fp)) return;
    emit(q, &tid, fp);
}

// Entries fetched from table 0 at a time. A fetch is a chain of dependent cache misses (map slot,
// buffer header, page); at 100M rows table 0 is 1.4 GB and every fetch misses. Pinned and asked
// for together, a batch's misses overlap instead of each fetch stalling the next.
constexpr Size kFetchBatch = 16;

// The entries at table-0 positions `positions` (count <= kFetchBatch), into `out`.
void fetch_entries(Relation index, ProbeQuery *q, const uint32 *positions, Size count, SimhashEntry *out) {
    BlockNumber blknos[kFetchBatch];
    Buffer buffers[kFetchBatch];
    for (Size i = 0; i < count; ++i) {
        blknos[i] = simhash_cached_table0_block(index, &q->cached_run, positions[i] / SIMHASH_ENTRIES_PER_PAGE);
        simhash_prefetch_buffer_header(index, blknos[i]);
    }
    for (Size i = 0; i < count; ++i) {
        const int offset = static_cast<int>(positions[i] % SIMHASH_ENTRIES_PER_PAGE);
        buffers[i] = read_ahead(index, blknos[i], offset * sizeof(int64), 1);
        __builtin_prefetch(simhash_page_tid(BufferGetPage(buffers[i]), offset));
    }
    for (Size i = 0; i < count; ++i) {
        const uint32 pos = positions[i];
        LockBuffer(buffers[i], BUFFER_LOCK_SHARE);
        const Page page = BufferGetPage(buffers[i]);
        simhash_check_page(index, page, blknos[i], SIMHASH_DATA);
        const uint32 offset = pos % SIMHASH_ENTRIES_PER_PAGE;
        if (offset >= SimhashPageGetOpaque(page)->nentries)
            ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                            errmsg("index \"%s\" refers to a missing entry %u", RelationGetRelationName(index), pos)));
        out[i].fp = SimhashPageGetFps(page)[offset];
        out[i].tid = *simhash_page_tid(page, static_cast<int>(offset));
        UnlockReleaseBuffer(buffers[i]);
    }
}

// The entries at table-0 positions `positions` (refs of table t that passed their key filter),
// verified in full.
void fetch_and_consider(Relation index, ProbeQuery *q, int t, const uint32 *positions, Size n) {
    for (Size first = 0; first < n; first += kFetchBatch) {
        const Size count = Min(n - first, kFetchBatch);
        SimhashEntry entries[kFetchBatch];
        fetch_entries(index, q, positions + first, count, entries);
        for (Size i = 0; i < count; ++i) consider(index, q, t, entries[i]);
    }
}

// Where the entries of a probed prefix lie: from (blkno, offset) up to the next prefix's slot.
struct ProbeRange {
    SimhashDirSlot begin;
    SimhashDirSlot end;
    bool empty() const { return begin.blkno == InvalidBlockNumber || (begin.blkno == end.blkno && begin.offset >= end.offset); }
};

// The entries of table t whose directory prefix is `prefix`.
ProbeRange slot_range(Relation index, const ProbeQuery *q, int t, Size prefix) {
    ProbeRange range;
    range.begin = *simhash_cached_dir_slot(index, &q->cached_run, t, prefix);
    range.end.blkno = InvalidBlockNumber;
    range.end.offset = 0;
    if (prefix + 1 < (Size{1} << q->g.dirbits[t])) range.end = *simhash_cached_dir_slot(index, &q->cached_run, t, prefix + 1);
    return range;
}

ProbeRange probe_range(Relation index, const ProbeQuery *q, int t, uint32 value) {
    return slot_range(index, q, t, simhash_prefix(value, &q->g, t));
}

// The first page of the probe that comes next, read ahead while the current probe runs;
// InvalidBuffer for an empty range.
// Lines of a range's first page asked for ahead: a probe's, and a batch sweep's (which reads the
// whole range: a few lines start the stream, the hardware prefetcher follows it within the page,
// and more requests at once only queue behind each other).
constexpr int kProbeLinesAhead = 32;
constexpr int kSweepLinesAhead = 8;

Buffer pin_ahead(Relation index, const ProbeRange &range, int t, int max_lines) {
    if (range.empty()) return InvalidBuffer;
    // Every line of the range on its first page, up to max_lines (a probe of a large run reads
    // about a hundred entries, 1-2 kB, at a random place: the hardware prefetcher would find the
    // stream too late).
    const Size entry = t == 0 ? sizeof(int64) : sizeof(SimhashRef);
    const int per_page = t == 0 ? SIMHASH_ENTRIES_PER_PAGE : SIMHASH_REFS_PER_PAGE;
    const int last = range.end.blkno == range.begin.blkno ? range.end.offset : per_page;
    const int lines = Min(static_cast<int>((Max(last - range.begin.offset, 1) * entry + 63) / 64), max_lines);
    return read_ahead(index, range.begin.blkno, range.begin.offset * entry, lines);
}

// The next page of a probed range, pinned (the pin pin_ahead or the page before took, given in
// *pinned, or read here), share-locked and checked; *n its entries up to the range's end, *last
// whether the range ends on it. A range that goes on past it (a slot's thousands of entries in a
// large four-table run) has its following page pinned into *pinned, `lines_ahead` of its lines
// asked for, while the caller reads this one; the caller releases a pin left there at its end.
Page lock_range_page(Relation index, int t, BlockNumber blkno, const SimhashDirSlot &end, int lines_ahead,
                     Buffer *pinned, Buffer *buffer, int *n, bool *last) {
    *buffer = BufferIsValid(*pinned) ? *pinned : simhash_read_buffer_hinted(index, blkno);
    *pinned = InvalidBuffer;
    LockBuffer(*buffer, BUFFER_LOCK_SHARE);
    Page page = BufferGetPage(*buffer);
    simhash_check_page(index, page, blkno, t == 0 ? SIMHASH_DATA : SIMHASH_REF);
    const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
    *last = blkno == end.blkno;
    *n = *last ? Min(static_cast<int>(opaque->nentries), static_cast<int>(end.offset)) : opaque->nentries;
    const BlockNumber next = opaque->next;
    if (!*last && next != InvalidBlockNumber && !(next == end.blkno && end.offset == 0))
        *pinned = read_ahead(index, next, 0, lines_ahead);
    return page;
}

// The entries of table t whose block equals `value`: they lie in `range`, between the directory's
// slot for the value's prefix and the next prefix's slot (an empty range costs no page), sorted by
// the block's bits below the prefix, which table 0 has in its fingerprints and refs in their keys.
// `pinned`: the range's first page, pinned by pin_ahead (or InvalidBuffer: read it here).
void probe(Relation index, ProbeQuery *q, int t, uint32 value, const ProbeRange &range, Buffer pinned) {
    const SimhashGeometry *g = &q->g;
    const Size prefix = simhash_prefix(value, g, t);
    const SimhashDirSlot &end = range.end;
    const uint32 sub = simhash_subblock(value, g, t);
    const int prefix_distance = simhash::popcount64(prefix ^ simhash_prefix(q->qblock[t], g, t));
    const int budget = q->r - prefix_distance;
    // An ordered scan's ring fetches the refs its ring may hold and puts the others aside.
    const bool put_aside = q->rings && q->ring < q->r;
    BlockNumber blkno = range.begin.blkno;
    int start = range.begin.offset;
    while (blkno != InvalidBlockNumber && !(blkno == end.blkno && start >= end.offset)) {
        Buffer buffer;
        int n;
        bool last;
        Page page = lock_range_page(index, t, blkno, end, kProbeLinesAhead, &pinned, &buffer, &n, &last);
        const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        bool done = last;
        uint32 hits[Max(SIMHASH_ENTRIES_PER_PAGE, SIMHASH_REFS_PER_PAGE)];
        Size nfetch = 0;  // refs whose entries to fetch from table 0: their positions, in hits
        if (t == 0) {
            // Sorted by block: the value's entries, then greater blocks (this probe is done).
            const int64 *fps = SimhashPageGetFps(page);
            const Size nhits = start < n ? simhash::select_within_radius(reinterpret_cast<const uint64_t *>(fps + start),
                                                                         n - start, static_cast<uint64_t>(q->center[q->primary]),
                                                                         q->r, hits)
                                         : 0;
            for (Size h = 0; h < nhits; ++h) {
                const int i = start + static_cast<int>(hits[h]);
                if (simhash_block(fps[i], g, 0) != value) continue;
                SimhashEntry entry;
                entry.fp = fps[i];
                entry.tid = *simhash_page_tid(page, i);
                consider(index, q, t, entry);
            }
            if (n > start && simhash_block(fps[n - 1], g, 0) > value) done = true;
        } else {
            // Sorted by the bits below the prefix (which lead each key), then by the rest.
            const SimhashRef *refs = SimhashPageGetRefs(page);
            const int below_bits = g->len[t] - g->dirbits[t];
            const uint32 lead = below_bits > 0 ? sub << (32 - below_bits) : 0;
            const uint32 lead_mask = below_bits > 0 ? ~uint32{0} << (32 - below_bits) : 0;
            const Size nhits = start < n ? simhash::select_keys_within(&refs[start].key, sizeof(SimhashRef) / sizeof(uint32),
                                                                       n - start, lead, lead_mask, q->qref[t].key,
                                                                       Max(budget, -1), hits)
                                         : 0;
            // The keys selected are within the budget; the bits a ref keeps after its key (none
            // in runs written without them) bound the entry's distance closer, and every hit
            // still within the radius is fetched once the ref page is released.
            for (Size h = 0; h < nhits; ++h) {
                const SimhashRef &ref = refs[start + hits[h]];
                const int bound = prefix_distance + simhash_ref_distance(ref, q->qref[t], g);
                if (bound > q->r) continue;
                const uint32 position = simhash_ref_position(ref.pos, g);
                if (put_aside && bound > q->ring) {
                    reserve_one(&q->aside, q->naside, &q->aside_capacity, q->so->context);
                    q->aside[q->naside++] = PutAside{position, q->run_index, static_cast<uint8>(t),
                                                     static_cast<uint8>(bound), static_cast<uint8>(q->ring)};
                    continue;
                }
                hits[nfetch++] = position;
            }
            if (n > start && simhash_ref_subblock(refs[n - 1].key, g, t) > sub) done = true;
        }
        blkno = done ? InvalidBlockNumber : opaque->next;
        start = 0;
        UnlockReleaseBuffer(buffer);
        fetch_and_consider(index, q, t, hits, nfetch);
    }
    if (BufferIsValid(pinned)) ReleaseBuffer(pinned);  // the range ended before the page read ahead
}

// A probe is a chain of dependent cache misses: its directory slot, the buffer hint of the page
// the slot names, that buffer's header, the page's lines. run_probes walks each probe through
// them in stages a few probes apart, asking for the next link of the chain at each stage, so that
// the misses of several probes overlap instead of each chain stalling the loop: pinning takes a
// buffer header's spinlock, an atomic instruction that waits for every load before it. A page is
// pinned kProbesAhead probes before it is probed (pins held at once stay within the backend's
// small array of private pins); each earlier stage is kProbeStageGap probes before the next.
constexpr int kProbesAhead = 4;
constexpr int kProbeStageGap = 2;
// A batch sweep reads a whole slot (1-2 pages) and starts further ahead: its reading from memory,
// not its comparisons, is what it waits for.
constexpr int kSweepSlotsAhead = 8;

struct PendingProbe {
    int table;
    uint32 value;
    ProbeRange range;
    Buffer pinned;
};

// Sets q's probing center (its blocks and ref keys in the run's geometry, q->g).
void set_probe_center(ProbeQuery *q, int64 center) {
    for (int t = 0; t < q->g.ntables; ++t) {
        q->qblock[t] = simhash_block(center, &q->g, t);
        q->qref[t] = simhash_ref_bits(center, &q->g, t);
    }
}

// A batch with radius <= 3 on a run of four tables whose directory is the whole 16-bit block is
// checked by sweeping two of its tables (core/slot_sweep.h): a slot of table t holds the entries of
// one block t value sorted by block t + 1 (the top 16 bits of a ref's key, the second block of a
// table-0 fingerprint's key), so tables 0 and 2 give every pair whose blocks 0-1 or 2-3 are within
// one bit, which every pair within 3 bits is. A batch of a million rows touches nearly every slot:
// read in order, half of the run's tables once, instead of probing all four for each row.
//
// Only for a batch large enough: each center wants 17 slots of each of the two tables instead of
// one of each of the four, so a small batch reads fewer pages through its probes (one slot of
// each table a center, compared with that center alone). The sweep is chosen when the slots it
// reads, expected for n random centers, are no more than those the probes would read.
bool sweeps_halves(const ProbeQuery *q, const SimhashRunData *run, Size n) {
    if (!(q->r <= simhash::kSlotSweepMaxRadius && run->ntables == 4 && run->dirbits == 16 && q->g.len[0] == 16))
        return false;
    const double slots = simhash::kSlotSweepSlots;
    const double sweep_slots = 2 * slots * -std::expm1(-17.0 * static_cast<double>(n) / slots);
    const double probe_slots = 4 * slots * -std::expm1(-static_cast<double>(n) / slots);
    return sweep_slots <= probe_slots;
}

// Entries a sweep asks for ahead of the one it compares, within a page: each page of a slot is
// where its stream starts (pages lie anywhere in shared buffers), and the hardware prefetcher
// alone ramps up too late on a page read once, front to back.
constexpr int kSweepEntriesAhead = 64;

// The entries of one slot of table t (0 or 2) within the radius of the slot's centers (`wants`),
// to the batch's caller. `pinned`: the range's first page, pinned by pin_ahead.
void sweep_slot(Relation index, ProbeQuery *q, int t, uint32 slot, const ProbeRange &range, Buffer pinned,
                simhash::SlotWants *wants) {
    const SimhashDirSlot &last_slot = range.end;
    const simhash::BitPermuter *permuter = q->g.permuter;  // loaded once: stores below may alias q
    const int radius = q->r;
    BlockNumber blkno = range.begin.blkno;
    int start = range.begin.offset;
    uint32 positions[Max(SIMHASH_ENTRIES_PER_PAGE, SIMHASH_REFS_PER_PAGE)];
    auto emit_within = [&](Size m, ItemPointer tid) {
        for (Size k = 0; k < m; ++k) emit_batch(q, wants->centers[wants->matches[k]], tid);
    };
    while (blkno != InvalidBlockNumber && !(blkno == last_slot.blkno && start >= last_slot.offset)) {
        Buffer buffer;
        int n;
        bool last;
        Page page = lock_range_page(index, t, blkno, last_slot, kSweepLinesAhead, &pinned, &buffer, &n, &last);
        const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        Size nfetch = 0;
        if (t == 0) {
            // Whole fingerprints: compared at once, the entry reported while its page is held (its
            // TID, in the page's other half, read only then).
            const int64 *fps = SimhashPageGetFps(page);
            for (int i = start; i < n; ++i) {
                __builtin_prefetch(fps + i + kSweepEntriesAhead);
                const uint64 key = simhash_key(fps[i], permuter);
                if (!simhash::slot_wants_next(wants, simhash::next_block_of(key))) continue;
                const Size m = simhash::slot_wants_select(wants, key, radius);
                if (m == 0) continue;
                ItemPointerData tid = *simhash_page_tid(page, i);
                if (!simhash_tid_is_dead(&tid)) emit_within(m, &tid);
            }
        } else {
            // A ref holds the 32 bits after the slot: fetched only if those 48 bits are within the
            // radius of a center's.
            const SimhashRef *refs = SimhashPageGetRefs(page);
            for (int i = start; i < n; ++i) {
                __builtin_prefetch(refs + i + kSweepEntriesAhead);
                if (!simhash::slot_wants_next(wants, refs[i].key >> 16)) continue;
                if (simhash::slot_wants_any48(wants, (uint64{slot} << 32) | refs[i].key, radius))
                    positions[nfetch++] = simhash_ref_position(refs[i].pos, &q->g);
            }
        }
        blkno = last ? InvalidBlockNumber : opaque->next;
        start = 0;
        UnlockReleaseBuffer(buffer);
        for (Size k = 0; k < nfetch; k += kFetchBatch) {
            const Size count = Min(nfetch - k, kFetchBatch);
            SimhashEntry entries[kFetchBatch];
            fetch_entries(index, q, positions + k, count, entries);
            for (Size e = 0; e < count; ++e)
                if (!simhash_tid_is_dead(&entries[e].tid))
                    emit_within(simhash::slot_wants_select(wants, simhash::rotate_blocks(simhash_key(entries[e].fp, &q->g), t), radius),
                                &entries[e].tid);
        }
    }
    if (BufferIsValid(pinned)) ReleaseBuffer(pinned);
}

// Memory for sweeping one table at a time for up to n centers: their rotated keys and batch
// numbers, the groups by slot, a slot's wants, the slots to sweep.
struct SweepScratch {
    uint64 *keys;
    uint32 *numbers;
    void *group_memory;
    void *wants_memory;
    simhash::SlotWants *wants;
    uint32 *slots;
};

void sweep_scratch_init(SweepScratch *s, Size n) {
    s->keys = static_cast<uint64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * Max(n, Size{1})));
    s->numbers = static_cast<uint32 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * Max(n, Size{1})));
    s->group_memory = MemoryContextAllocHuge(CurrentMemoryContext, simhash::slot_groups_bytes(n));
    s->wants_memory = MemoryContextAllocHuge(CurrentMemoryContext, simhash::slot_wants_bytes(n));
    s->wants = static_cast<simhash::SlotWants *>(palloc(sizeof(simhash::SlotWants)));
    s->slots = static_cast<uint32 *>(palloc(sizeof(uint32) * simhash::kSlotSweepSlots));
}

void sweep_scratch_free(SweepScratch *s) {
    pfree(s->slots);
    pfree(s->wants);
    pfree(s->wants_memory);
    pfree(s->group_memory);
    pfree(s->numbers);
    pfree(s->keys);
}

// The keys of the centers still to search (those without an entry yet, per `skip`, where the
// batch needs one each) rotated for table t, and their batch numbers, into s; returns how many.
Size sweep_centers(const ProbeQuery *q, const int64 *centers, Size n, const uint8 *skip, int t, SweepScratch *s) {
    Size m = 0;
    for (Size i = 0; i < n; ++i) {
        if (skip && skip[i]) continue;
        s->keys[m] = simhash::rotate_blocks(simhash_key(centers[i], &q->g), t);
        s->numbers[m++] = static_cast<uint32>(i);
    }
    return m;
}

// Reads the slots `slots` (directory prefixes, ascending) of table t of the run in q->cached_run,
// several started ahead: started(slot) when a slot's first page is asked for, read(slot, range,
// pinned) to compare its entries (releasing the pin). Stops between slots once q->batch_full is
// set, releasing the pins of the slots started ahead.
template <typename Started, typename Read>
void read_slots(Relation index, ProbeQuery *q, int t, const uint32 *slots, Size nslots, Started started, Read read) {
    PendingProbe ahead[kSweepSlotsAhead];
    auto start_slot = [&](Size i) {
        PendingProbe &p = ahead[i % kSweepSlotsAhead];
        p.table = t;
        p.value = slots[i];
        p.range = slot_range(index, q, t, p.value);
        p.pinned = pin_ahead(index, p.range, t, kSweepLinesAhead);
        started(p.value);
    };
    for (Size i = 0; i < Min(nslots, static_cast<Size>(kSweepSlotsAhead)); ++i) start_slot(i);
    for (Size i = 0; i < nslots; ++i) {
        if ((i & 255) == 0) CHECK_FOR_INTERRUPTS();
        const PendingProbe current = ahead[i % kSweepSlotsAhead];
        if (i + kSweepSlotsAhead < nslots) start_slot(i + kSweepSlotsAhead);
        if (current.range.empty()) {
            if (BufferIsValid(current.pinned)) ReleaseBuffer(current.pinned);
            continue;
        }
        read(current.value, current.range, current.pinned);
        if (q->batch_full) {
            for (Size k = i + 1; k < Min(nslots, i + 1 + kSweepSlotsAhead); ++k)
                if (BufferIsValid(ahead[k % kSweepSlotsAhead].pinned)) ReleaseBuffer(ahead[k % kSweepSlotsAhead].pinned);
            return;
        }
    }
}

// Sweeps table t (0 or 2) of the run in q->cached_run for the m centers in s: every slot in
// [from, to) some center wants, in order, several started ahead. Stops between slots once
// q->batch_full is set.
void sweep_table(Relation index, ProbeQuery *q, int t, Size m, uint32 from, uint32 to, SweepScratch *s) {
    simhash::SlotGroups groups;
    simhash::slot_groups_build(&groups, s->group_memory, s->keys, s->numbers, m);
    simhash::slot_wants_init(s->wants, s->wants_memory, m);
    Size nslots = 0;
    for (uint32 v = from; v < to; ++v)
        if (simhash::slot_groups_want(&groups, v)) s->slots[nslots++] = v;
    read_slots(index, q, t, s->slots, nslots, [&](uint32 slot) { simhash::slot_groups_prefetch(&groups, slot); },
               [&](uint32 slot, const ProbeRange &range, Buffer pinned) {
                   simhash::slot_wants_fill(s->wants, &groups, slot);
                   sweep_slot(index, q, t, slot, range, pinned, s->wants);
               });
}

// A large batch on a run that a pair of halves cannot check (a radius over 3, or tables of wide
// blocks: three tables of 21-22 bits in runs of 2^27 entries or more) is checked by sweeping each
// table it probes (core/value_groups.h): every slot some center wants, once and in order, each
// block value's entries compared with the centers whose block lies within the table's per-block
// radius of it, one vector pass a center as a probe makes. The pairs compared are the probes' own,
// and each is reported by the table a probe reports it from (the first whose block is within its
// radius); what goes is a probe's chain of cache misses for each (center, value), which at radius
// 3 is 23 probes a center in table 0 of a three-table run.
//
// Chosen where every probed table has a per-block radius of 0 or 1 and blocks of at most 22 bits,
// and the batch wants at least as many (center, value) probes as the tables have slots: then the
// slots it reads are about all those the probes would read.
bool sweeps_values(const ProbeQuery *q, Size n) {
    double wants = 0, slots = 0;
    for (int t = 0; t < q->g.ntables; ++t) {
        if (q->rb[t] < 0) continue;
        if (q->rb[t] > simhash::kValueGroupMaxRadius || q->g.len[t] > simhash::kValueGroupMaxBits) return false;
        wants += static_cast<double>(n) * simhash::hamming_ball_size(q->g.len[t], q->rb[t]);
        slots += std::ldexp(1.0, q->g.dirbits[t]);
    }
    return slots > 0 && wants >= slots;
}

// Memory for sweeping the tables of one run for up to n centers.
struct ValueSweep {
    // The centers still searched when a table's sweep starts, by rank (the order of their block
    // values, core/value_groups.h): batch numbers, fingerprints, blocks, and ref keys and tails of
    // the table.
    uint32 *numbers;
    int64 *fps;
    uint32 *blocks;
    uint32 *keys;
    uint32 *tails;
    void *group_memory;
    simhash::ValueGroups groups;
    uint32 *scratch;      // the centers in batch order, before they are laid out by rank
    uint64 *slot_bitmap;  // a bit for each slot of the table swept (table 0's are the most)
    uint32 *slots;        // the slots to read, in order
    // The centers compared with the block value being read: ranks, and ref budgets (the radius
    // less the bits the value's directory prefix differs from the center's).
    uint32 *gathered;
    int *budgets;
    Size ngathered;
    // Refs within the budget of a center, to fetch from table 0: positions and batch numbers.
    uint32 *fetch_positions;
    uint32 *fetch_numbers;
    Size nfetch;
    Size fetch_capacity;
};

template <typename T>
T *alloc_huge(Size n) {
    return static_cast<T *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(T) * Max(n, Size{1})));
}

void value_sweep_init(ValueSweep *vs, const SimhashGeometry *g, Size n) {
    int bits = 1;
    for (int t = 0; t < g->ntables; ++t) bits = Max(bits, Min(g->len[t], simhash::kValueGroupMaxBits));
    vs->numbers = alloc_huge<uint32>(n);
    vs->fps = alloc_huge<int64>(n);
    vs->blocks = alloc_huge<uint32>(n);
    vs->keys = alloc_huge<uint32>(n);
    vs->tails = alloc_huge<uint32>(n);
    vs->group_memory = MemoryContextAllocHuge(CurrentMemoryContext, simhash::value_groups_bytes(bits, n));
    vs->scratch = alloc_huge<uint32>(n);
    vs->slot_bitmap = alloc_huge<uint64>((Size{1} << g->dirbits[0]) / 64 + 1);
    vs->slots = alloc_huge<uint32>(Size{1} << g->dirbits[0]);
    vs->gathered = alloc_huge<uint32>(n);
    vs->budgets = alloc_huge<int>(n);
    vs->ngathered = 0;
    vs->fetch_capacity = 1024;
    vs->fetch_positions = alloc_huge<uint32>(vs->fetch_capacity);
    vs->fetch_numbers = alloc_huge<uint32>(vs->fetch_capacity);
    vs->nfetch = 0;
}

void value_sweep_free(ValueSweep *vs) {
    for (void *p : {static_cast<void *>(vs->numbers), static_cast<void *>(vs->fps), static_cast<void *>(vs->blocks),
                    static_cast<void *>(vs->keys), static_cast<void *>(vs->tails), vs->group_memory, static_cast<void *>(vs->scratch),
                    static_cast<void *>(vs->slot_bitmap), static_cast<void *>(vs->slots),
                    static_cast<void *>(vs->gathered), static_cast<void *>(vs->budgets),
                    static_cast<void *>(vs->fetch_positions), static_cast<void *>(vs->fetch_numbers)})
        pfree(p);
}

bool batch_center_has_one(const ProbeQuery *q, Size center) {
    return (q->batch_have && q->batch_have[center]) || (q->batch_shared_have && q->batch_shared_have[center]);
}

// The centers to compare with the entries of block `value` (directory prefix `prefix`) of table t:
// those within the table's per-block radius of it. A center that has found an entry since the
// table's sweep began is still compared (looking its flag up for every value would cost more than
// the comparisons it saves); what it finds is not reported (see report_within).
void gather_value(const ProbeQuery *q, ValueSweep *vs, int t, Size prefix, uint32 value) {
    vs->ngathered = simhash::value_groups_gather(&vs->groups, value, q->rb[t], vs->gathered);
    if (t > 0)
        for (Size k = 0; k < vs->ngathered; ++k)
            vs->budgets[k] = q->r - simhash::popcount64(prefix ^ simhash_prefix(vs->blocks[vs->gathered[k]], &q->g, t));
}

// An entry within the radius of the center with batch number `number`: to the batch's caller,
// unless the center needs one entry and has it.
void report_within(ProbeQuery *q, Size number, ItemPointer tid) {
    if (!batch_center_has_one(q, number)) emit_batch(q, number, tid);
}

void queue_fetch(ValueSweep *vs, uint32 position, uint32 number) {
    if (vs->nfetch == vs->fetch_capacity) {
        vs->fetch_capacity *= 2;
        vs->fetch_positions = static_cast<uint32 *>(repalloc_huge(vs->fetch_positions, sizeof(uint32) * vs->fetch_capacity));
        vs->fetch_numbers = static_cast<uint32 *>(repalloc_huge(vs->fetch_numbers, sizeof(uint32) * vs->fetch_capacity));
    }
    vs->fetch_positions[vs->nfetch] = position;
    vs->fetch_numbers[vs->nfetch++] = number;
}

// The queued refs' entries, each considered for its center as a probe's candidate is (verified on
// all 64 bits, left to an earlier table whose block is within its radius).
void fetch_queued(Relation index, ProbeQuery *q, int t, const int64 *centers, ValueSweep *vs) {
    for (Size k = 0; k < vs->nfetch; k += kFetchBatch) {
        const Size count = Min(vs->nfetch - k, kFetchBatch);
        SimhashEntry entries[kFetchBatch];
        fetch_entries(index, q, vs->fetch_positions + k, count, entries);
        for (Size e = 0; e < count; ++e) {
            q->batch_center = vs->fetch_numbers[k + e];
            q->center[0] = centers[q->batch_center];
            set_probe_center(q, q->center[0]);
            consider(index, q, t, entries[e]);
        }
    }
    vs->nfetch = 0;
}

// The end of the entries from `i` on (below n) whose block value is `value`: the first whose block
// is greater (entries are sorted by block). block(j) is entry j's.
template <typename Block>
int value_end(int i, int n, uint32 value, Block block) {
    int lo = i + 1, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (block(mid) > value)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// Calls compare(i, end) for each run [i, end) of the entries start .. n-1 of a page of table t
// that share a block value (block(j): entry j's; ascending), the value's centers gathered into vs
// first unless *value says they are there already (a value's entries may go on from the previous
// page). `several`: the page may hold several values (else it holds one).
template <typename Block, typename Compare>
void each_value_run(const ProbeQuery *q, ValueSweep *vs, int t, Size prefix, int start, int n, bool several, Block block,
                    int64 *value, Compare compare) {
    for (int i = start; i < n;) {
        const uint32 v = block(i);
        const int end = several ? value_end(i, n, v, block) : n;
        if (*value != v) {
            *value = v;
            gather_value(q, vs, t, prefix, v);
        }
        compare(i, end);
        i = end;
    }
}

// The entries of one slot (directory prefix) of table t within the radius of the centers that want
// their block values: each value's entries on a page compared with each such center in one
// vector pass, as a probe compares them with its center. `pinned`: the range's first page, pinned
// by pin_ahead.
void value_sweep_slot(Relation index, ProbeQuery *q, int t, Size prefix, const ProbeRange &range, Buffer pinned,
                      const int64 *centers, ValueSweep *vs) {
    const SimhashGeometry *g = &q->g;
    const int radius = q->r;
    const int sub_bits = g->len[t] - g->dirbits[t];
    int64 value = -1;  // the block value whose centers vs holds (none yet)
    uint32 hits[Max(SIMHASH_ENTRIES_PER_PAGE, SIMHASH_REFS_PER_PAGE)];
    BlockNumber blkno = range.begin.blkno;
    int start = range.begin.offset;
    while (blkno != InvalidBlockNumber && !(blkno == range.end.blkno && start >= range.end.offset)) {
        Buffer buffer;
        int n;
        bool last;
        Page page = lock_range_page(index, t, blkno, range.end, kSweepLinesAhead, &pinned, &buffer, &n, &last);
        const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        if (t == 0) {
            const int64 *fps = SimhashPageGetFps(page);
            auto block = [&](int j) { return simhash_block(fps[j], g, 0); };
            each_value_run(q, vs, t, prefix, start, n, true, block, &value, [&](int i, int end) {
                for (Size k = 0; k < vs->ngathered; ++k) {
                    const uint32 rank = vs->gathered[k];
                    const Size nhits = simhash::select_within_radius(reinterpret_cast<const uint64_t *>(fps + i), end - i,
                                                                     static_cast<uint64_t>(vs->fps[rank]), radius, hits);
                    for (Size h = 0; h < nhits; ++h) {
                        ItemPointerData tid = *simhash_page_tid(page, i + static_cast<int>(hits[h]));
                        if (!simhash_tid_is_dead(&tid)) report_within(q, vs->numbers[rank], &tid);
                    }
                }
            });
        } else {
            const SimhashRef *refs = SimhashPageGetRefs(page);
            auto block = [&](int j) { return static_cast<uint32>(prefix << sub_bits) | simhash_ref_subblock(refs[j].key, g, t); };
            each_value_run(q, vs, t, prefix, start, n, sub_bits > 0, block, &value, [&](int i, int end) {
                for (Size k = 0; k < vs->ngathered; ++k) {
                    const uint32 rank = vs->gathered[k];
                    const Size nhits = simhash::select_keys_within(&refs[i].key, sizeof(SimhashRef) / sizeof(uint32), end - i, 0, 0,
                                                                   vs->keys[rank], vs->budgets[k], hits);
                    for (Size h = 0; h < nhits; ++h) {
                        // Within the budget by key; the ref's tail may still put it outside.
                        const SimhashRef &ref = refs[i + hits[h]];
                        if (simhash_ref_distance(ref, SimhashRefBits{vs->keys[rank], vs->tails[rank]}, g) > vs->budgets[k])
                            continue;
                        queue_fetch(vs, simhash_ref_position(ref.pos, g), vs->numbers[rank]);
                    }
                }
            });
        }
        blkno = last ? InvalidBlockNumber : opaque->next;
        start = 0;
        UnlockReleaseBuffer(buffer);
        if (vs->nfetch > 0) fetch_queued(index, q, t, centers, vs);
    }
    if (BufferIsValid(pinned)) ReleaseBuffer(pinned);
}

// Sweeps table t of the run in q->cached_run over the slots [from, to) for the batch's centers
// that have no entry yet (where one is enough). Stops between slots once q->batch_full is set.
void value_sweep_table(Relation index, ProbeQuery *q, int t, const int64 *centers, Size n, Size from, Size to,
                       ValueSweep *vs) {
    const SimhashGeometry *g = &q->g;
    // The centers still searched (batch numbers in scratch, blocks in keys for now), grouped by
    // block value, then laid out by rank.
    Size m = 0;
    for (Size i = 0; i < n; ++i) {
        if (batch_center_has_one(q, i)) continue;
        vs->scratch[m] = static_cast<uint32>(i);
        vs->keys[m++] = simhash_block(centers[i], g, t);
    }
    if (m == 0) return;
    simhash::value_groups_build(&vs->groups, vs->group_memory, g->len[t], vs->keys, m);
    for (Size k = 0; k < m; ++k) {
        const uint32 given = vs->groups.members[k];
        vs->numbers[k] = vs->scratch[given];
        vs->fps[k] = centers[vs->scratch[given]];
        vs->blocks[k] = vs->keys[given];
    }
    for (Size k = 0; k < m; ++k) {
        const SimhashRefBits bits = t > 0 ? simhash_ref_bits(vs->fps[k], g, t) : SimhashRefBits{0, 0};
        vs->keys[k] = bits.key;
        vs->tails[k] = bits.tail;
    }
    const Size nslots_all = Size{1} << g->dirbits[t];
    memset(vs->slot_bitmap, 0, sizeof(uint64) * (nslots_all / 64 + 1));
    simhash::value_groups_mark(&vs->groups, q->rb[t], g->len[t] - g->dirbits[t], vs->slot_bitmap);
    Size nslots = 0;
    for (Size s = from; s < to; ++s)
        if ((vs->slot_bitmap[s >> 6] >> (s & 63)) & 1) vs->slots[nslots++] = static_cast<uint32>(s);
    read_slots(index, q, t, vs->slots, nslots, [](uint32) {}, [&](uint32 slot, const ProbeRange &range, Buffer pinned) {
        value_sweep_slot(index, q, t, slot, range, pinned, centers, vs);
    });
}

// A batch sweep (of the halves of a four-table run, or of every probed table of a run of wide
// blocks) in one process or in two: the leader and one worker each sweep half of the slots of the
// first table, then, once both are done with it, half of those of the next. A center found in one
// table by either (their shared flags) is not looked for in the next, as in a sweep by one
// process; on two cores the check of a large chunk takes half the time. The worker reports its
// (center, heap TID) pairs through the shared memory below; if they overflow it, the leader drops
// them and sweeps every slot itself.
constexpr uint64 kSweepKeyShared = UINT64CONST(0x5348000000000001);
constexpr uint64 kSweepKeyCenters = UINT64CONST(0x5348000000000002);
constexpr uint64 kSweepKeyHave = UINT64CONST(0x5348000000000003);
constexpr uint64 kSweepKeyFound = UINT64CONST(0x5348000000000004);
// A run with fewer entries is swept by the leader alone: starting a worker (a new process that
// opens the index) costs a few milliseconds, about what sweeping a quarter of a million entries
// costs.
constexpr uint64 kParallelSweepMinEntries = uint64{1} << 18;

struct SweepShared {
    Oid index_oid;
    uint64 index_id;
    SimhashRunSlot run;
    int radius;
    Size ncenters;
    Size capacity;                 // room for this many results
    bool values;                   // a value sweep (sweeps_values), else the halves (sweeps_halves)
    bool prune;                    // one entry a center is enough: the flags below are used
    pg_atomic_uint32 tables_done;  // tables each process is done with, summed over the two
    // Written by the worker.
    Size nfound;
    bool overflowed;
    bool finished;
};

struct SweepFound {
    uint32 center;
    ItemPointerData tid;
};

struct WorkerResults {
    SweepFound *found;
    Size n;
    Size capacity;
    ProbeQuery *q;
};

void worker_found(void *context, Size center, ItemPointer tid) {
    WorkerResults *results = static_cast<WorkerResults *>(context);
    if (results->n == results->capacity) {
        results->q->batch_full = true;
        return;
    }
    results->found[results->n].center = static_cast<uint32>(center);
    results->found[results->n].tid = *tid;
    results->n++;
}

// A batch search's query: entries within `radius` of its centers go to found(context, ...);
// `have` as simhash_search_batch's.
ProbeQuery *new_batch_query(int radius, SimhashBatchFound found, void *context, uint8 *have) {
    ProbeQuery *q = static_cast<ProbeQuery *>(palloc0(sizeof(ProbeQuery)));
    q->nkeys = 1;
    q->radius[0] = q->r = Min(radius, 64);
    q->primary = 0;
    q->batch_found = found;
    q->batch_context = context;
    q->batch_have = have;
    return q;
}

// Sets q up to search a run (its geometry, bit order and directories).
void set_probe_run(ProbeQuery *q, const SimhashCachedRun &cached) {
    simhash_run_geometry(cached.run, &q->g);
    q->g.permuter = cached.permuter;
    q->cached_run = cached;
}

// Sets q's per-block radii for its run (q->g) and radius; returns the probes a center makes.
double set_probe_radii(ProbeQuery *q) {
    double per_center = 0;
    for (int t = 0; t < q->g.ntables; ++t) {
        q->rb[t] = simhash::block_probe_radius(q->r, q->g.ntables, t);
        per_center += simhash::hamming_ball_size(q->g.len[t], q->rb[t]);
    }
    return per_center;
}

// Sets an ordered scan's per-block radii for the run in q->g: those of ring `ring`, and those of
// the ring the run's earlier probes covered (`covered`, -1 for none).
void set_ring_radii(ProbeQuery *q, int ring, int covered) {
    for (int t = 0; t < q->g.ntables; ++t) {
        q->rb[t] = simhash::block_probe_radius(ring, q->g.ntables, t);
        q->rb_before[t] = covered < 0 ? -1 : simhash::block_probe_radius(covered, q->g.ntables, t);
    }
}

// Until the other process is done with its `tables` first tables too (the leader: or its worker
// has stopped).
void wait_for_tables(SweepShared *shared, ParallelContext *pcxt, uint32 tables) {
    pg_atomic_fetch_add_u32(&shared->tables_done, 1);
    while (pg_atomic_read_u32(&shared->tables_done) < 2 * tables) {
        CHECK_FOR_INTERRUPTS();
        pid_t pid;
        if (pcxt != nullptr && GetBackgroundWorkerPid(pcxt->worker[0].bgwhandle, &pid) == BGWH_STOPPED) break;
        pg_usleep(100);
    }
    pg_memory_barrier();  // the other's flags, set before its increment, are seen
}

// One process's memory for a batch sweep of either kind.
struct BatchSweep {
    bool values;
    SweepScratch halves;
    ValueSweep by_value;
};

void batch_sweep_init(BatchSweep *b, const ProbeQuery *q, bool values, Size n) {
    b->values = values;
    if (values)
        value_sweep_init(&b->by_value, &q->g, n);
    else
        sweep_scratch_init(&b->halves, n);
}

void batch_sweep_free(BatchSweep *b) {
    if (b->values)
        value_sweep_free(&b->by_value);
    else
        sweep_scratch_free(&b->halves);
}

// The slots of table t a sweep of the run in q->cached_run goes through (half each in a parallel
// sweep).
Size batch_sweep_slots(const ProbeQuery *q, bool values, int t) {
    return values ? Size{1} << q->g.dirbits[t] : simhash::kSlotSweepSlots;
}

// Which slots of each table a process sweeps: part `part` of `parts` equal shares.
struct SweepShare {
    int part;
    int parts;
};
constexpr SweepShare kSweepAll = {0, 1};
constexpr SweepShare kSweepLeaderHalf = {0, 2};
constexpr SweepShare kSweepWorkerHalf = {1, 2};

// The tables of the sweep over each table's share of slots, in order: halves, tables 0 and then
// 2; by value, every table probed. A table looks for the centers `skip` (halves) or q's flags (by
// value) do not rule out, read again for each table: what one table found is not looked for in
// the next. `shared`: a parallel sweep's, whose halves meet between the tables.
void sweep_tables(Relation index, ProbeQuery *q, const int64 *centers, Size n, const uint8 *skip, SweepShare share,
                  BatchSweep *b, SweepShared *shared, ParallelContext *pcxt) {
    int tables[SIMHASH_MAX_TABLES];
    int ntables = 0;
    for (int t = 0; t < q->g.ntables; ++t)
        if (b->values ? q->rb[t] >= 0 : (t == 0 || t == 2)) tables[ntables++] = t;
    for (int k = 0; k < ntables; ++k) {
        const int t = tables[k];
        const Size slots = batch_sweep_slots(q, b->values, t);
        const Size from = slots * share.part / share.parts, to = slots * (share.part + 1) / share.parts;
        if (b->values) {
            value_sweep_table(index, q, t, centers, n, from, to, &b->by_value);
        } else {
            const Size m = sweep_centers(q, centers, n, skip, t, &b->halves);
            if (m > 0) sweep_table(index, q, t, m, static_cast<uint32>(from), static_cast<uint32>(to), &b->halves);
        }
        if (k + 1 == ntables) break;
        if (shared != nullptr) wait_for_tables(shared, pcxt, k + 1);
        if (q->batch_full) return;
    }
}

void sweep_worker(shm_toc *toc) {
    SweepShared *shared = static_cast<SweepShared *>(shm_toc_lookup(toc, kSweepKeyShared, false));
    const int64 *centers = static_cast<const int64 *>(shm_toc_lookup(toc, kSweepKeyCenters, false));
    uint8 *have = static_cast<uint8 *>(shm_toc_lookup(toc, kSweepKeyHave, false));
    SweepFound *found = static_cast<SweepFound *>(shm_toc_lookup(toc, kSweepKeyFound, false));
    // The leader holds the index locked; the worker's lock joins its lock group.
    Relation index = index_open(shared->index_oid, AccessShareLock);
    WorkerResults results = {found, 0, shared->capacity, nullptr};
    ProbeQuery *q = new_batch_query(shared->radius, worker_found, &results, nullptr);
    results.q = q;
    q->batch_shared_have = shared->prune ? have : nullptr;
    SimhashCachedRun cached;
    simhash_cached_run(index, shared->index_id, &shared->run, &cached);
    set_probe_run(q, cached);
    set_probe_radii(q);
    BatchSweep b;
    batch_sweep_init(&b, q, shared->values, shared->ncenters);
    sweep_tables(index, q, centers, shared->ncenters, q->batch_shared_have, kSweepWorkerHalf, &b, shared, nullptr);
    batch_sweep_free(&b);
    shared->nfound = results.n;
    shared->overflowed = q->batch_full;
    shared->finished = true;
    index_close(index, AccessShareLock);
}

// Starts a worker sweeping the upper half of the slots of the run `slot`; nullptr when none
// could start. The shared flags start as the batch's.
ParallelContext *start_parallel_sweep(Relation index, ProbeQuery *q, uint64 index_id, const SimhashRunSlot *slot,
                                      const int64 *centers, Size n, bool values) {
    if (max_parallel_maintenance_workers == 0 || IsInParallelMode() || !IsUnderPostmaster ||
        slot->nentries < kParallelSweepMinEntries || !ActiveSnapshotSet())
        return nullptr;
    // Room for two results a center: a chunk rich in near-duplicates may need more, and then the
    // leader sweeps alone after all.
    const Size capacity = 2 * n + 1024;
    EnterParallelMode();
    ParallelContext *pcxt = CreateParallelContext("simhash", "simhash_sweep_worker_main", 1);
    shm_toc_estimate_chunk(&pcxt->estimator, sizeof(SweepShared));
    shm_toc_estimate_chunk(&pcxt->estimator, sizeof(int64) * n);
    shm_toc_estimate_chunk(&pcxt->estimator, n);
    shm_toc_estimate_chunk(&pcxt->estimator, sizeof(SweepFound) * capacity);
    shm_toc_estimate_keys(&pcxt->estimator, 4);
    InitializeParallelDSM(pcxt);
    if (pcxt->seg == nullptr) {  // no dynamic shared memory to be had
        DestroyParallelContext(pcxt);
        ExitParallelMode();
        return nullptr;
    }
    SweepShared *shared = static_cast<SweepShared *>(shm_toc_allocate(pcxt->toc, sizeof(SweepShared)));
    shared->index_oid = RelationGetRelid(index);
    shared->index_id = index_id;
    shared->run = *slot;
    shared->radius = q->r;
    shared->ncenters = n;
    shared->capacity = capacity;
    shared->values = values;
    shared->prune = q->batch_have != nullptr;
    pg_atomic_init_u32(&shared->tables_done, 0);
    shared->nfound = 0;
    shared->overflowed = false;
    shared->finished = false;
    int64 *shared_centers = static_cast<int64 *>(shm_toc_allocate(pcxt->toc, sizeof(int64) * n));
    memcpy(shared_centers, centers, sizeof(int64) * n);
    uint8 *have = static_cast<uint8 *>(shm_toc_allocate(pcxt->toc, n));
    if (q->batch_have)
        memcpy(have, q->batch_have, n);
    else
        memset(have, 0, n);
    shm_toc_insert(pcxt->toc, kSweepKeyShared, shared);
    shm_toc_insert(pcxt->toc, kSweepKeyCenters, shared_centers);
    shm_toc_insert(pcxt->toc, kSweepKeyHave, have);
    shm_toc_insert(pcxt->toc, kSweepKeyFound, shm_toc_allocate(pcxt->toc, sizeof(SweepFound) * capacity));
    LaunchParallelWorkers(pcxt);
    if (pcxt->nworkers_launched == 0) {
        DestroyParallelContext(pcxt);
        ExitParallelMode();
        return nullptr;
    }
    return pcxt;
}

// Sweeps the run `slot` (in q->cached_run, its probe radii set) for the batch's centers: its
// halves, or by value (`values`); half of the slots in a parallel worker when one can start.
void sweep_batch(Relation index, ProbeQuery *q, uint64 index_id, const SimhashRunSlot *slot, const int64 *centers, Size n,
                 bool values) {
    BatchSweep b;
    batch_sweep_init(&b, q, values, n);
    ParallelContext *pcxt = start_parallel_sweep(index, q, index_id, slot, centers, n, values);
    if (pcxt == nullptr) {
        sweep_tables(index, q, centers, n, q->batch_have, kSweepAll, &b, nullptr, nullptr);
        batch_sweep_free(&b);
        return;
    }
    SweepShared *shared = static_cast<SweepShared *>(shm_toc_lookup(pcxt->toc, kSweepKeyShared, false));
    // Without batch_have every entry is wanted (the caller ranks them): nothing is left out.
    uint8 *shared_have = shared->prune ? static_cast<uint8 *>(shm_toc_lookup(pcxt->toc, kSweepKeyHave, false)) : nullptr;
    q->batch_shared_have = shared_have;
    sweep_tables(index, q, centers, n, shared_have, kSweepLeaderHalf, &b, shared, pcxt);
    WaitForParallelWorkersToFinish(pcxt);
    q->batch_shared_have = nullptr;
    const bool complete = shared->finished && !shared->overflowed;
    if (complete) {
        const SweepFound *found = static_cast<SweepFound *>(shm_toc_lookup(pcxt->toc, kSweepKeyFound, false));
        for (Size k = 0; k < shared->nfound; ++k) {
            if ((k & 4095) == 0) CHECK_FOR_INTERRUPTS();
            ItemPointerData tid = found[k].tid;
            emit_batch(q, found[k].center, &tid);
        }
    }
    DestroyParallelContext(pcxt);
    ExitParallelMode();
    // The worker's results are lost: its half (and, since the leader's half of the later tables
    // left out the centers it had found, everything) is swept again, for the centers the leader's
    // own results do not settle.
    if (!complete) sweep_tables(index, q, centers, n, q->batch_have, kSweepAll, &b, nullptr, nullptr);
    batch_sweep_free(&b);
}

// A batch's probes of one (table, value): the centers that want it, members[first .. end) of the
// batch's sorted probes.
struct ProbeGroup {
    const Wanted *members;
    const Size *first;  // per distinct probe, and one past the last
};

// Runs the probes `wanted` (of the run in q->cached_run) in order, several in flight. For a
// batch (`group`), wanted holds each (table, value) once, and it is probed for each of its
// centers in turn, q's center switched to each before: located and pinned once.
void run_probes(Relation index, ProbeQuery *q, const Wanted *wanted, Size n, const ProbeGroup *group) {
    // Stages, as distances ahead of the probe that runs: the directory slot's line asked for;
    // the slot read and the page's hint asked for; the buffer header asked for; the page pinned
    // and its lines asked for.
    constexpr Size kPinAt = kProbesAhead;
    constexpr Size kHeaderAt = kPinAt + kProbeStageGap;
    constexpr Size kLocateAt = kHeaderAt + kProbeStageGap;
    constexpr Size kSlotAt = kLocateAt + kProbeStageGap;
    constexpr Size kRing = kLocateAt + 1;  // the probes located and not yet run, at most
    PendingProbe ahead[kRing];
    auto stage = [&](Size j) -> PendingProbe & { return ahead[j % kRing]; };
    // The probe `distance` places ahead of the one step `step` runs, into *k, if there is one:
    // step s runs probe s - kSlotAt, the loop starting kSlotAt steps early to fill the stages.
    auto probe_at = [&](Size step, Size distance, Size *k) {
        if (step + distance < kSlotAt || step + distance - kSlotAt >= n) return false;
        *k = step + distance - kSlotAt;
        return true;
    };
    for (Size step = 0; step < n + kSlotAt; ++step) {
        Size k;
        if (probe_at(step, kSlotAt, &k)) {  // the slot's line, if its directory page is copied
            const SimhashDirSlot *slot =
                simhash_copied_dir_slot(&q->cached_run, wanted[k].table, simhash_prefix(wanted[k].value, &q->g, wanted[k].table));
            if (slot) __builtin_prefetch(slot);
        }
        if (probe_at(step, kLocateAt, &k)) {
            PendingProbe &p = stage(k);
            p.table = wanted[k].table;
            p.value = wanted[k].value;
            p.range = probe_range(index, q, p.table, p.value);  // copies a directory page not copied yet
            p.pinned = InvalidBuffer;
            if (!p.range.empty()) simhash_prefetch_buffer_hint(index, p.range.begin.blkno);
        }
        if (probe_at(step, kHeaderAt, &k) && !stage(k).range.empty())
            simhash_prefetch_buffer_header(index, stage(k).range.begin.blkno);
        if (probe_at(step, kPinAt, &k)) stage(k).pinned = pin_ahead(index, stage(k).range, stage(k).table, kProbeLinesAhead);
        Size i;
        if (!probe_at(step, 0, &i)) continue;
        if ((i & 255) == 0) CHECK_FOR_INTERRUPTS();
        const PendingProbe current = stage(i);
        if (group == nullptr) {
            probe(index, q, current.table, current.value, current.range, current.pinned);
            continue;
        }
        const Size end = group->first[i + 1];
        // Each probe releases the pin it is given: one pin for each center probed, taken before the
        // probe that would release the last one.
        auto live = [&](Size j) { return !(q->batch_have && q->batch_have[group->members[j].center]); };
        Size remaining = 0;
        for (Size j = group->first[i]; j < end; ++j) remaining += live(j) ? 1 : 0;
        if (remaining == 0 && BufferIsValid(current.pinned)) ReleaseBuffer(current.pinned);
        for (Size j = group->first[i]; j < end; ++j) {
            if (!live(j)) continue;
            q->center[0] = group->members[j].fp;
            q->batch_center = group->members[j].center;
            set_probe_center(q, q->center[0]);
            if (--remaining > 0 && BufferIsValid(current.pinned)) IncrBufferRefCount(current.pinned);
            probe(index, q, current.table, current.value, current.range, current.pinned);
        }
    }
}

void probe_tables(Relation index, ProbeQuery *q) {
    // Every (table, block value) pair to probe, tables in order, values ascending within a table.
    double total_probes = 1;
    for (int t = 0; t < q->g.ntables; ++t) total_probes += simhash::hamming_ball_size(q->g.len[t], q->rb[t]);
    Wanted *wanted = static_cast<Wanted *>(palloc(static_cast<Size>(total_probes) * sizeof(Wanted)));
    Size n = 0;
    for (int t = 0; t < q->g.ntables; ++t) {
        if (q->rb[t] < 0) continue;
        // An ordered scan's ring probes only the values its earlier rings did not.
        const int before = q->rings ? Min(q->rb_before[t], q->g.len[t]) : -1;
        if (before >= Min(q->rb[t], q->g.len[t])) continue;
        const Size first = n;
        simhash::for_each_value_within(q->qblock[t], q->g.len[t], Min(q->rb[t], q->g.len[t]), [&](uint32 value) {
            if (before < 0 || simhash::popcount64(value ^ q->qblock[t]) > before)
                wanted[n++] = Wanted{value, static_cast<uint16>(t), 0, 0};
        });
        std::sort(wanted + first, wanted + n, [](const Wanted &a, const Wanted &b) { return a.value < b.value; });
    }
    run_probes(index, q, wanted, n, nullptr);
    pfree(wanted);
}

// Fills q from the scan keys (none for an ordered scan with no condition); false when no row can
// match (NULL ball, negative radius).
bool prepare_query(IndexScanDesc scan, ProbeQuery *q) {
    q->nkeys = 0;
    for (int k = 0; k < scan->numberOfKeys; ++k) {
        const ScanKey key = &scan->keyData[k];
        if (key->sk_strategy != HAMMING_WITHIN_STRATEGY || key->sk_subtype == INT8OID)
            elog(ERROR, "simhash index \"%s\": scan key of strategy %d is not a hamming_ball search",
                 RelationGetRelationName(scan->indexRelation), key->sk_strategy);
        if (key->sk_flags & SK_ISNULL) return false;
        const HammingBall *ball = DatumGetHammingBall(key->sk_argument);
        if (ball->radius < 0) return false;
        q->center[q->nkeys] = ball->center;
        q->radius[q->nkeys] = Min(ball->radius, 64);
        q->nkeys++;
    }
    return true;
}

// Fetches the refs of run `run` (the one q is set to) that earlier rings put aside and whose
// bound is within `upto`, and verifies each as the probe that selected it would have (the
// earlier-table rule and the rings before it are those of its ring).
void fetch_put_aside(Relation index, ProbeQuery *q, uint32 run, int upto) {
    PutAside *begin = q->aside, *end = q->aside + q->naside;
    PutAside *due = std::partition(begin, end, [&](const PutAside &a) { return a.run == run && a.bound <= upto; });
    if (due == begin) return;
    std::sort(begin, due, [](const PutAside &a, const PutAside &b) {
        return a.ring != b.ring ? a.ring < b.ring : a.table < b.table;
    });
    const Size n = static_cast<Size>(due - begin);
    uint32 *positions = static_cast<uint32 *>(palloc(n * sizeof(uint32)));
    for (Size i = 0; i < n; ++i) positions[i] = begin[i].position;
    for (Size first = 0; first < n;) {
        const int ring = begin[first].ring, t = begin[first].table;
        Size last = first;
        while (last < n && begin[last].ring == ring && begin[last].table == t) ++last;
        set_ring_radii(q, ring, ring == q->first_ring ? -1 : ring - 1);
        fetch_and_consider(index, q, t, positions + first, last - first);
        first = last;
    }
    pfree(positions);
    memmove(begin, due, static_cast<Size>(end - due) * sizeof(PutAside));
    q->naside -= n;
}

// Every entry within all of q's balls, through emit(), searched structure by structure: the
// lists and the runs the metapage named when the search began. A tuple scan may stop after a
// structure read from its pages that emitted entries (p->may_stop), and go on with the
// others from the next call: a caller that wants one row (EXISTS, LIMIT 1, the dedup trigger's
// 'skip') does not pay for the rest once the largest run has one. Nothing found is lost by
// stopping, and nothing is emitted twice: each structure is marked done once searched, and each
// heap row is in one structure. Between calls the search keeps only its copy of the metapage's
// lists (the structures stay readable, as for a long search: the scan's snapshot holds back
// their recycling); backend copies and cached runs are looked up again, since another scan may
// drop them meanwhile. On a hot standby the metapage stays share-locked until the search ends, so
// there it never stops early.
void search(Relation index, ProbeQuery *q, SearchProgress *p) {
    // The call that begins the search holds the metapage until its end (only its pin, but for
    // the lock on a hot standby).
    const bool beginning = !p->begun;
    SimhashMetaReader meta_reader;
    if (beginning) {
        int primary = 0;  // probe with the smallest ball, verify all of them
        for (int k = 1; k < q->nkeys; ++k)
            if (q->radius[k] < q->radius[primary]) primary = k;
        // The lists to read, copied; on a hot standby the metapage stays share-locked (see above).
        const SimhashMetaData *meta = simhash_meta_lock(index, &meta_reader);
        p->list_heads[0] = meta->pending_head;
        p->list_heads[1] = meta->merge_head;
        p->list_entries[0] = meta->npending;
        p->list_entries[1] = meta->nmerge;
        p->epoch = meta->pending_epoch;
        p->nruns = meta->nruns;
        p->index_id = meta->index_id;
        p->runs = static_cast<SimhashRunSlot *>(MemoryContextAlloc(p->context, Max(p->nruns, 1) * sizeof(SimhashRunSlot)));
        p->run_done = static_cast<bool *>(MemoryContextAllocZero(p->context, Max(p->nruns, 1) * sizeof(bool)));
        memcpy(p->runs, meta->runs, p->nruns * sizeof(SimhashRunSlot));
        if (q->rings) {
            p->run_ring = static_cast<int *>(MemoryContextAlloc(p->context, Max(p->nruns, 1) * sizeof(int)));
            for (uint32 i = 0; i < p->nruns; ++i) p->run_ring[i] = -1;
        }
        // A probe's page found through a hint skips the shared buffer mapping table, whose lookup
        // is a cache miss of its own in large shared buffers: hints for as many pages as the runs
        // hold.
        simhash_reserve_buffer_hints(simhash_run_pages(meta));
        simhash_meta_copied(&meta_reader);
        if (meta_reader.held)
            p->may_stop = false;
        else
            simhash_debug_pause();
        q->primary = primary;
        q->r = q->radius[primary];
        p->begun = true;
    }
    const int primary = q->primary;
    const int64 found_before = q->found;

    simhash_copy_cache_scan_begins();
    // Backend copies (the lists, small runs) are searched last: the lines their search starts from
    // are requested when they are found, and arrive while the large runs' pages are probed.
    struct Later {
        const SimhashCachedChain *copy;
        bool *done;
    };
    Later *later = static_cast<Later *>(palloc((p->nruns + 2) * sizeof(Later)));
    int nlater = 0;
    auto search_later = [&](const SimhashCachedChain *copy, bool *done) {
        simhash::block_buckets_prefetch(copy->buckets, static_cast<uint64>(q->center[primary]), q->r);
        later[nlater++] = Later{copy, done};
    };
    // Read from pages: done, and where the caller may stop, a reason to stop if it found entries.
    auto read_and_stop = [&](bool *done) {
        *done = true;
        return p->may_stop && q->found > found_before;
    };
    bool stopped = false;
    bool rings_left = false;  // a run's probes cover a ring short of the ball: later rings probe it again
    for (int l = 0; l < 2 && !stopped; ++l) {
        if (p->list_done[l]) continue;
        const SimhashCachedChain *copy =
            simhash_cached_list(index, p->index_id, p->epoch, p->list_heads[l], p->list_entries[l]);
        if (copy != nullptr) {
            search_later(copy, &p->list_done[l]);
            continue;
        }
        scan_chain(index, q, p->list_heads[l], SIMHASH_PENDING, p->list_entries[l]);
        stopped = read_and_stop(&p->list_done[l]);
    }
    double random_page_cost, seq_page_cost;
    get_tablespace_page_costs(index->rd_rel->reltablespace, &random_page_cost, &seq_page_cost);
    for (uint32 i = 0; i < p->nruns && !stopped; ++i) {
        if (p->run_done[i]) continue;
        const SimhashRunSlot *slot = &p->runs[i];
        SimhashCachedRun cached;
        simhash_cached_run(index, p->index_id, slot, &cached);
        const SimhashRunData *run = cached.run;
        // A run that an earlier ring probed is not searched through a copy (it has none: runs
        // are copied by size), and a full read skips what those rings found.
        const bool probed_before = q->rings && p->run_ring[i] >= 0;
        if (!probed_before) {
            const SimhashCachedChain *copy = simhash_cached_run_entries(index, p->index_id, slot, run);
            if (copy != nullptr) {
                search_later(copy, &p->run_done[i]);
                continue;
            }
        }
        set_probe_run(q, cached);
        set_probe_center(q, q->center[primary]);
        q->run_index = i;
        // An ordered scan's ring probes while that costs less than reading table 0, which then
        // finds the rest of the epoch's ball at once (and the refs put aside are fetched first:
        // the read skips what earlier rings found).
        SimhashScanEstimate estimate;
        simhash_estimate_scan(slot, q->rings ? q->ring : q->r, random_page_cost, seq_page_cost, &estimate);
        if (estimate.full_scan) {
            if (probed_before) {
                fetch_put_aside(index, q, i, 64);
                set_ring_radii(q, q->ring, p->run_ring[i]);
                q->read_after_rings = true;
            }
            scan_chain(index, q, run->tables[0].first, SIMHASH_DATA, slot->nentries);
            q->read_after_rings = false;
            stopped = read_and_stop(&p->run_done[i]);
            continue;
        }
        if (q->rings) {
            if (probed_before) fetch_put_aside(index, q, i, q->ring);
            set_ring_radii(q, q->ring, p->run_ring[i]);
        } else {
            set_probe_radii(q);
        }
        probe_tables(index, q);
        if (q->rings) {
            p->run_ring[i] = q->ring;
            if (q->ring < q->r) {
                rings_left = true;
                continue;
            }
        }
        stopped = read_and_stop(&p->run_done[i]);
    }
    if (!stopped) {
        // The copies' directory lines have arrived by now: the lines of their entries are asked
        // for together before the first copy is searched.
        for (int c = 0; c < nlater; ++c)
            simhash::block_buckets_prefetch_entries(later[c].copy->buckets, later[c].copy->fps,
                                                    static_cast<uint64>(q->center[primary]), q->r);
        for (int c = 0; c < nlater; ++c) {
            search_copy(q, later[c].copy);
            *later[c].done = true;
        }
        p->finished = !rings_left;
    }
    pfree(later);
    if (beginning) simhash_meta_release(&meta_reader);
    if (p->finished) search_progress_free(p);
}

// Searches all of q in one call (bitmap scans, the rings of ordered scans).
void search_all(Relation index, ProbeQuery *q) {
    SearchProgress progress = {};
    progress.context = CurrentMemoryContext;
    search(index, q, &progress);
}

// The probes of a batch held at once: centers are taken in groups whose probes fit.
constexpr Size kBatchProbes = Size{1} << 20;
// Centers from which a batch copies a list that the backend's copies do not hold.
constexpr Size kBatchListCopyCenters = 256;

// Sorts a batch's probes by (table, value), keeping the centers' order among equal pairs: two
// stable counting passes over 16-bit digits of table << 24 | value (blocks are at most 22 bits).
// Returns the sorted array (`wanted` or `scratch`).
const Wanted *sort_wanted(Wanted *wanted, Wanted *scratch, Size n) {
    constexpr int kDigitBits = 16;
    constexpr Size kDigits = Size{1} << kDigitBits;
    Size *counts = static_cast<Size *>(palloc(kDigits * sizeof(Size)));
    Wanted *from = wanted, *to = scratch;
    for (int pass = 0; pass < 2; ++pass) {
        const int shift = pass * kDigitBits;
        auto digit = [shift](const Wanted &w) {
            return ((static_cast<uint64>(w.table) << 24 | w.value) >> shift) & (kDigits - 1);
        };
        memset(counts, 0, kDigits * sizeof(Size));
        for (Size i = 0; i < n; ++i) counts[digit(from[i])]++;
        Size sum = 0;
        for (Size d = 0; d < kDigits; ++d) {
            const Size c = counts[d];
            counts[d] = sum;
            sum += c;
        }
        for (Size i = 0; i < n; ++i) to[counts[digit(from[i])]++] = from[i];
        std::swap(from, to);
    }
    pfree(counts);
    return from;
}

}  // namespace

void simhash_search_batch(Relation index, const int64 *centers, Size n, int radius, SimhashBatchFound found,
                          void *context, uint8 *have) {
    if (n == 0 || radius < 0) return;
    ProbeQuery *q = new_batch_query(radius, found, context, have);
    SimhashMetaReader meta_reader;
    const SimhashMetaData *meta = simhash_meta_lock(index, &meta_reader);
    const BlockNumber list_heads[2] = {meta->pending_head, meta->merge_head};
    const uint64 list_entries[2] = {meta->npending, meta->nmerge};
    const uint32 epoch = meta->pending_epoch;
    const uint64 index_id = meta->index_id;
    const uint32 nruns = meta->nruns;
    SimhashRunSlot *runs = static_cast<SimhashRunSlot *>(palloc(Max(nruns, 1) * sizeof(SimhashRunSlot)));
    memcpy(runs, meta->runs, nruns * sizeof(SimhashRunSlot));
    simhash_reserve_buffer_hints(simhash_run_pages(meta));
    simhash_meta_copied(&meta_reader);
    simhash_copy_cache_scan_begins();

    // Every center through a backend copy, or (a structure read from its pages in full) through
    // its chain.
    auto each_center = [&](const SimhashCachedChain *copy, BlockNumber head, uint16 flags, uint64 entries) {
        for (Size i = 0; i < n; ++i) {
            if ((i & 1023) == 0) CHECK_FOR_INTERRUPTS();
            if (have && have[i]) continue;
            q->center[0] = centers[i];
            q->batch_center = i;
            if (copy != nullptr)
                search_copy(q, copy);
            else
                scan_chain(index, q, head, flags, entries);
        }
    };
    for (int l = 0; l < 2; ++l) {
        if (list_heads[l] == InvalidBlockNumber) continue;
        const SimhashCachedChain *copy = simhash_cached_list(index, index_id, epoch, list_heads[l], list_entries[l]);
        // A list too long for the cache is copied for this batch alone when the batch has enough
        // centers to pay for it (reading the list costs about what scanning it for a few hundred
        // centers does).
        if (copy == nullptr && n >= kBatchListCopyCenters)
            copy = simhash_batch_list_copy(index, list_heads[l], list_entries[l]);
        each_center(copy, list_heads[l], SIMHASH_PENDING, list_entries[l]);
    }
    double random_page_cost, seq_page_cost;
    get_tablespace_page_costs(index->rd_rel->reltablespace, &random_page_cost, &seq_page_cost);
    for (uint32 r = 0; r < nruns; ++r) {
        const SimhashRunSlot *slot = &runs[r];
        SimhashCachedRun cached;
        simhash_cached_run(index, index_id, slot, &cached);
        const SimhashRunData *run = cached.run;
        const SimhashCachedChain *copy = simhash_cached_run_entries(index, index_id, slot, run);
        SimhashScanEstimate estimate;
        simhash_estimate_scan(slot, q->r, random_page_cost, seq_page_cost, &estimate);
        if (copy != nullptr || estimate.full_scan) {
            each_center(copy, run->tables[0].first, SIMHASH_DATA, slot->nentries);
            continue;
        }
        set_probe_run(q, cached);
        const double per_center = set_probe_radii(q);
        const bool halves = sweeps_halves(q, run, n);
        if (halves || sweeps_values(q, n)) {
            sweep_batch(index, q, index_id, slot, centers, n, !halves);
            continue;
        }
        const Size group = Max(Size{1}, static_cast<Size>(kBatchProbes / Max(per_center, 1.0)));
        const Size capacity = static_cast<Size>(Min(static_cast<double>(group), static_cast<double>(n)) * per_center + 1);
        Wanted *wanted = static_cast<Wanted *>(MemoryContextAllocHuge(CurrentMemoryContext, capacity * sizeof(Wanted)));
        Wanted *scratch = static_cast<Wanted *>(MemoryContextAllocHuge(CurrentMemoryContext, capacity * sizeof(Wanted)));
        Size *first_member = static_cast<Size *>(MemoryContextAllocHuge(CurrentMemoryContext, (capacity + 1) * sizeof(Size)));
        for (Size from = 0; from < n; from += group) {
            const Size to = Min(n, from + group);
            Size count = 0;
            for (Size i = from; i < to; ++i) {
                if (have && have[i]) continue;
                set_probe_center(q, centers[i]);
                for (int t = 0; t < run->ntables; ++t) {
                    if (q->rb[t] < 0) continue;
                    simhash::for_each_value_within(q->qblock[t], q->g.len[t], Min(q->rb[t], q->g.len[t]), [&](uint32 value) {
                        wanted[count++] = Wanted{value, static_cast<uint16>(t), static_cast<uint32>(i), centers[i]};
                    });
                }
            }
            // Sorted, then each (table, value) once in the other array, with where its centers start.
            const Wanted *sorted = sort_wanted(wanted, scratch, count);
            Wanted *distinct = sorted == wanted ? scratch : wanted;
            Size ndistinct = 0;
            for (Size i = 0; i < count; ++i) {
                if (i > 0 && sorted[i].table == sorted[i - 1].table && sorted[i].value == sorted[i - 1].value) continue;
                first_member[ndistinct] = i;
                distinct[ndistinct++] = sorted[i];
            }
            first_member[ndistinct] = count;
            const ProbeGroup probe_group{sorted, first_member};
            run_probes(index, q, distinct, ndistinct, &probe_group);
        }
        pfree(wanted);
        pfree(scratch);
        pfree(first_member);
    }
    pfree(runs);
    simhash_meta_release(&meta_reader);
    pfree(q);
}

namespace {

// Adds a ball to q; a scan with no condition is the ball of radius 64, NULL fingerprints included.
void add_ball(ProbeQuery *q, int64 center, int radius) {
    q->center[q->nkeys] = center;
    q->radius[q->nkeys] = radius;
    q->nkeys++;
}

// Fills q from the scan's keys (a scan with no condition: radius 64, NULL fingerprints included)
// and counts the scan; false when no row can match.
bool start_query(IndexScanDesc scan, ProbeQuery *q) {
    // One scan per (re)scan, as the built-in AMs count it (pg_stat_user_indexes.idx_scan); the
    // executor counts the tuples returned (idx_tup_read).
    pgstat_count_index_scan(scan->indexRelation);
    if (!prepare_query(scan, q)) return false;
    if (q->nkeys == 0) {
        add_ball(q, 0, 64);
        q->with_nulls = true;
    }
    return true;
}

// A tuple scan's next part: its first call sets up the query; each call searches until entries
// come or every structure is searched.
void collect_more(IndexScanDesc scan, ScanOpaque *so) {
    if (so->query == nullptr) {
        so->query = static_cast<ProbeQuery *>(MemoryContextAllocZero(so->context, sizeof(ProbeQuery)));
        so->query->so = so;
        if (!start_query(scan, so->query)) {
            so->search.finished = true;
            return;
        }
    }
    search(scan->indexRelation, so->query, &so->search);
}

void end_epoch(ScanOpaque *so);

// Resets a scan's query and search, and an ordered scan's epoch (rescan, end).
void reset_search(ScanOpaque *so) {
    end_epoch(so);
    if (so->query) pfree(so->query);
    so->query = nullptr;
    search_progress_free(&so->search);
    so->search = SearchProgress{};
    so->search.context = so->context;
    so->search.may_stop = true;
}

// Order of a ring: by the first distance, the later keys' distances, then TID.
struct ItemPrecedes {
    const ScanOpaque *so;
    bool operator()(const OrderedItem &a, const OrderedItem &b) const {
        if (a.distance != b.distance) return a.distance < b.distance;
        if (so->nlater > 0) {
            const uint16 *da = so->later_distances + static_cast<Size>(a.arrival) * so->nlater;
            const uint16 *db = so->later_distances + static_cast<Size>(b.arrival) * so->nlater;
            for (int k = 0; k < so->nlater; ++k)
                if (da[k] != db[k]) return da[k] < db[k];
        }
        ItemPointerData ta = a.tid, tb = b.tid;
        return ItemPointerCompare(&ta, &tb) < 0;
    }
};

// Starts an ordered scan's next epoch: its query, the ball of the scan's keys and of radius F
// around the first ORDER BY fingerprint (F the next ring radius of simhash_next_ring_radius).
// When a scan key's ball is no larger than F, the epoch's ball is 64: that key's ball is searched
// anyway, so all of its rows come in one ring. The last ring of a scan without keys brings the
// rows whose fingerprint is NULL (distance NULL, after all others, as ORDER BY sorts NULLs last).
// False when no row can match.
bool start_epoch(IndexScanDesc scan, ScanOpaque *so) {
    Relation index = scan->indexRelation;
    if (so->done_radius < 0) pgstat_count_index_scan(index);
    ProbeQuery *q = static_cast<ProbeQuery *>(MemoryContextAllocZero(so->context, sizeof(ProbeQuery)));
    q->so = so;
    if (!prepare_query(scan, q)) {
        pfree(q);
        return false;
    }
    const int nconditions = q->nkeys;
    if (so->ring_tables == 0) {
        SimhashMetaData meta;
        simhash_read_meta(index, &meta);
        so->ring_tables = simhash_ring_tables(&meta);
    }
    int radius = so->order_null ? 64 : simhash_next_ring_radius(so->done_radius, so->ring_tables);
    for (int k = 0; k < nconditions; ++k)
        if (q->radius[k] <= radius) radius = 64;
    if (radius < 64 || nconditions == 0) add_ball(q, so->order_null ? 0 : so->order_center, radius);
    q->with_nulls = nconditions == 0 && radius == 64;
    // Ring by ring inside the ball (the smallest of the scan's, so the one probed), except on a hot
    // standby, where a search holds the metapage's lock within one call: it cannot span the
    // calls of several rings, and the ball comes as one ring.
    q->rings = radius < 64 && !RecoveryInProgress();
    q->first_ring = so->done_radius + 1;
    so->epoch_radius = radius;
    so->epoch = q;
    so->epoch_search = SearchProgress{};
    so->epoch_search.context = so->context;
    so->narrived = 0;
    return true;
}

// Ends an ordered scan's epoch (its last ring collected, or a rescan).
void end_epoch(ScanOpaque *so) {
    if (so->epoch && so->epoch->aside) pfree(so->epoch->aside);
    if (so->epoch) pfree(so->epoch);
    so->epoch = nullptr;
    search_progress_free(&so->epoch_search);
    so->epoch_search = SearchProgress{};
}

// Collects the next ring of an ordered scan: every row satisfying the scan keys at a distance in
// (done_radius, ring radius] from the first ORDER BY fingerprint, sorted by (distance, the later
// ORDER BY keys' distances, TID), at the front of the items; the rows of the epoch's later rings
// found so far stay behind them.
void collect_ring(IndexScanDesc scan, ScanOpaque *so) {
    const Size kept = so->nitems - so->next;
    if (kept > 0 && so->next > 0) memmove(so->items, so->items + so->next, kept * sizeof(OrderedItem));
    so->nitems = kept;
    so->next = 0;
    so->ring_end = 0;
    if (so->epoch == nullptr) {
        Assert(kept == 0);
        if (!start_epoch(scan, so)) {
            so->exhausted = true;
            return;
        }
    }
    ProbeQuery *q = so->epoch;
    q->ring = q->rings ? so->done_radius + 1 : so->epoch_radius;
    // Once no run is left to probe (all were read in full, copied, or probed for the whole
    // ball), every row within the ball is found: the ring is the ball.
    if (!so->epoch_search.finished) search(scan->indexRelation, q, &so->epoch_search);
    const int ring = so->epoch_search.finished ? so->epoch_radius : q->ring;
    OrderedItem *ring_end = ring == 64 ? so->items + so->nitems
                                       : std::partition(so->items, so->items + so->nitems,
                                                        [&](const OrderedItem &item) { return item.distance <= ring; });
    std::sort(so->items, ring_end, ItemPrecedes{so});
    so->ring_end = static_cast<Size>(ring_end - so->items);
    so->done_radius = ring;
    if (ring == so->epoch_radius) end_epoch(so);
    so->exhausted = ring == 64;
}

}  // namespace

int simhash_next_ring_radius(int done, int ntables) {
    int radius = ((done + 1) / ntables + 1) * ntables - 1;
    if (radius > 24) radius = Max(radius, 2 * done + 2);
    return Min(radius, 64);
}

IndexScanDesc simhash_ambeginscan(Relation index, int nkeys, int norderbys) {
    IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
    ScanOpaque *so = static_cast<ScanOpaque *>(palloc0(sizeof(ScanOpaque)));
    so->context = CurrentMemoryContext;
    reset_search(so);
    scan->opaque = so;
    if (norderbys > 0) {  // the AM provides the arrays for the ORDER BY values it returns
        scan->xs_orderbyvals = static_cast<Datum *>(palloc0(sizeof(Datum) * norderbys));
        scan->xs_orderbynulls = static_cast<bool *>(palloc(sizeof(bool) * norderbys));
        memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
    }
    return scan;
}

void simhash_amrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys) {
    ScanOpaque *so = static_cast<ScanOpaque *>(scan->opaque);
    if (keys && scan->numberOfKeys > 0) memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
    if (orderbys && scan->numberOfOrderBys > 0)
        memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
    so->ntids = 0;
    so->next = 0;
    reset_search(so);
    so->ordered = scan->numberOfOrderBys > 0;
    if (so->ordered) {
        const ScanKey order = &scan->orderByData[0];
        so->order_null = (order->sk_flags & SK_ISNULL) != 0;
        so->order_center = so->order_null ? 0 : DatumGetInt64(order->sk_argument);
        so->nlater = scan->numberOfOrderBys - 1;
        if (so->nlater > 0 && so->later_centers == nullptr) {
            so->later_centers = static_cast<int64 *>(MemoryContextAlloc(so->context, so->nlater * sizeof(int64)));
            so->later_nulls = static_cast<bool *>(MemoryContextAlloc(so->context, so->nlater * sizeof(bool)));
        }
        for (int k = 0; k < so->nlater; ++k) {
            const ScanKey later = &scan->orderByData[k + 1];
            so->later_nulls[k] = (later->sk_flags & SK_ISNULL) != 0;
            so->later_centers[k] = so->later_nulls[k] ? 0 : DatumGetInt64(later->sk_argument);
        }
    }
    so->done_radius = -1;
    so->exhausted = false;
    so->nitems = 0;
    so->next = 0;
    so->ring_end = 0;
    so->narrived = 0;
}

// An index-only scan is planned only where no index column is needed (count(*) of a scan without
// conditions: simhash returns no columns, amcanreturn is unset), yet the executor wants a tuple:
// it gets one whose column is NULL, built once per scan.
void provide_index_tuple(IndexScanDesc scan, ScanOpaque *so) {
    if (!scan->xs_want_itup) return;
    if (so->empty_itup == nullptr) {
        MemoryContext old = MemoryContextSwitchTo(so->context);
        Datum value = 0;
        bool isnull = true;
        so->empty_itup = index_form_tuple(RelationGetDescr(scan->indexRelation), &value, &isnull);
        MemoryContextSwitchTo(old);
    }
    scan->xs_itup = so->empty_itup;
    scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
}

bool simhash_amgettuple(IndexScanDesc scan, ScanDirection dir) {
    ScanOpaque *so = static_cast<ScanOpaque *>(scan->opaque);
    provide_index_tuple(scan, so);
    if (so->ordered) {
        while (so->next >= so->ring_end) {
            if (so->exhausted) return false;
            collect_ring(scan, so);
        }
        const OrderedItem &item = so->items[so->next++];
        scan->xs_heaptid = item.tid;
        scan->xs_recheck = false;
        scan->xs_recheckorderby = false;
        scan->xs_orderbyvals[0] = Int32GetDatum(item.distance);
        scan->xs_orderbynulls[0] = item.distance == kNullDistance;
        for (int k = 0; k < so->nlater; ++k) {
            const uint16 d = so->later_distances[static_cast<Size>(item.arrival) * so->nlater + k];
            scan->xs_orderbyvals[k + 1] = Int32GetDatum(d);
            scan->xs_orderbynulls[k + 1] = d == kNullDistance;
        }
        return true;
    }
    while (so->next >= so->ntids) {
        if (so->search.finished) return false;
        collect_more(scan, so);
    }
    scan->xs_heaptid = so->tids[so->next++];
    scan->xs_recheck = false;
    return true;
}

int64 simhash_amgetbitmap(IndexScanDesc scan, TIDBitmap *tbm) {
    ProbeQuery *q = static_cast<ProbeQuery *>(palloc0(sizeof(ProbeQuery)));
    q->tbm = tbm;
    if (start_query(scan, q)) search_all(scan->indexRelation, q);
    flush_to_bitmap(q);
    if (q->tbm_batch) pfree(q->tbm_batch);
    if (q->tbm_scratch) pfree(q->tbm_scratch);
    const int64 found = q->found;
    pfree(q);
    return found;
}

void simhash_amendscan(IndexScanDesc scan) {
    ScanOpaque *so = static_cast<ScanOpaque *>(scan->opaque);
    reset_search(so);
    if (so->tids) pfree(so->tids);
    if (so->items) pfree(so->items);
    pfree(so);
}

// The parallel sweep's worker (see start_parallel_sweep), started by name by PostgreSQL.
extern "C" SIMHASH_EXPORT void simhash_sweep_worker_main(dsm_segment *seg, shm_toc *toc);
extern "C" void simhash_sweep_worker_main(dsm_segment *, shm_toc *toc) {
    simhash_pg::run_guarded("simhash_sweep_worker_main", [&] { sweep_worker(toc); });
}
