// ambuild / ambuildempty, and the writer of sorted tables shared with merges.
// A build writes its pages straight to the relation file and WAL-logs them as full pages
// (log_newpages, the per-batch form of log_newpage_range); a merge writes each new page through
// Generic WAL (full image).
//
// While they fit in maintenance_work_mem (28 bytes per entry), the entries are collected in memory
// and for every table counting-sorted by the directory prefix of that table's block (one O(n) pass;
// buckets are then sorted by the full block when the block is longer than the prefix). Beyond the
// budget they go to one tuplesort per table (key: the fingerprint rotated so that the table's
// block is on top), which spills to disk. Pages are filled in table order.
#include <algorithm>

#include "am/simhash_am.h"

extern "C" {
#include "access/tableam.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/tuplesort.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
}

void simhash_array_push(SimhashEntryArray *a, int64 fp, ItemPointer tid) {
    if (a->n == a->capacity) {
        const Size capacity = a->capacity ? a->capacity * 2 : 1024;
        a->items = static_cast<SimhashEntry *>(
            a->items ? repalloc_huge(a->items, capacity * sizeof(SimhashEntry))
                     : MemoryContextAllocHuge(CurrentMemoryContext, capacity * sizeof(SimhashEntry)));
        a->capacity = capacity;
    }
    a->items[a->n].fp = fp;
    a->items[a->n].tid = *tid;
    a->n++;
}

namespace {

// One page being filled in a local image. Merges (`logged`) allocate pages from the FSM or by
// extension and write each through Generic WAL (full image) while its buffer stays locked. Builds
// number pages sequentially and write them straight to the relation file in batches, bypassing
// shared buffers (as nbtsort does); a WAL-logged index logs each batch with log_newpages and is
// fsynced at the end of the build.
constexpr int kBatchPages = 32;

struct PageWriter {
    Relation index;
    bool logged;
    Buffer buffer;            // logged: the locked buffer of the current page
    BlockNumber blkno;        // the current page
    BlockNumber next_blkno;   // build: next page number
    int nbatch;               // build: pages waiting in batch
    BlockNumber batch_blknos[kBatchPages];
    PGAlignedBlock image;
    PGAlignedBlock batch[kBatchPages];
};

void writer_write_batch(PageWriter *w) {
    if (w->nbatch == 0) return;
    Page pages[kBatchPages];
    for (int i = 0; i < w->nbatch; ++i) pages[i] = w->batch[i].data;
    if (RelationNeedsWAL(w->index))
        log_newpages(&RelationGetSmgr(w->index)->smgr_rnode.node, MAIN_FORKNUM, w->nbatch, w->batch_blknos, pages, true);
    for (int i = 0; i < w->nbatch; ++i) {
        PageSetChecksumInplace(pages[i], w->batch_blknos[i]);
        smgrextend(RelationGetSmgr(w->index), MAIN_FORKNUM, w->batch_blknos[i], pages[i], true);
    }
    w->nbatch = 0;
}

void writer_flush(PageWriter *w, BlockNumber next) {
    if (w->blkno == InvalidBlockNumber) return;
    Page image = w->image.data;
    SimhashPageGetOpaque(image)->next = next;
    if (w->logged) {
        GenericXLogState *state = GenericXLogStart(w->index);
        Page page = GenericXLogRegisterBuffer(state, w->buffer, GENERIC_XLOG_FULL_IMAGE);
        memcpy(page, image, BLCKSZ);
        GenericXLogFinish(state);
        UnlockReleaseBuffer(w->buffer);
        w->buffer = InvalidBuffer;
    } else {
        memcpy(w->batch[w->nbatch].data, image, BLCKSZ);
        w->batch_blknos[w->nbatch++] = w->blkno;
        if (w->nbatch == kBatchPages) writer_write_batch(w);
    }
    w->blkno = InvalidBlockNumber;
}

// Starts a new page; the previous one (if any) is chained to it when `chain`.
BlockNumber writer_start(PageWriter *w, uint16 flags, bool chain) {
    Buffer buffer = InvalidBuffer;
    BlockNumber blkno;
    if (w->logged) {
        buffer = simhash_new_buffer(w->index, true);
        blkno = BufferGetBlockNumber(buffer);
    } else {
        blkno = w->next_blkno++;
    }
    writer_flush(w, chain ? blkno : InvalidBlockNumber);
    w->buffer = buffer;
    w->blkno = blkno;
    simhash_init_page(w->image.data, flags);
    return blkno;
}

void set_lower(Page page, Size bytes) {
    reinterpret_cast<PageHeader>(page)->pd_lower = static_cast<LocationIndex>(MAXALIGN(SizeOfPageHeaderData) + bytes);
}

struct BlockLess {
    const SimhashGeometry *g;
    int t;
    bool operator()(const SimhashEntry &a, const SimhashEntry &b) const {
        return simhash_block(a.fp, g, t) < simhash_block(b.fp, g, t);
    }
};

// Sorts `in` by block t into `out`: counting sort on the prefix, then each bucket by the block.
void sort_by_block(const SimhashEntry *in, SimhashEntry *out, Size n, const SimhashGeometry *g, int t,
                   Size *start /* 2^dirbits + 1 */) {
    const Size nbuckets = Size{1} << g->dirbits;
    memset(start, 0, (nbuckets + 1) * sizeof(Size));
    for (Size i = 0; i < n; ++i) start[simhash_prefix(simhash_block(in[i].fp, g, t), g, t) + 1]++;
    for (Size b = 0; b < nbuckets; ++b) start[b + 1] += start[b];
    for (Size i = 0; i < n; ++i) out[start[simhash_prefix(simhash_block(in[i].fp, g, t), g, t)]++] = in[i];
    // start[b] is now the end of bucket b.
    if (g->len[t] > g->dirbits) {
        Size begin = 0;
        for (Size b = 0; b < nbuckets; ++b) {
            if (start[b] - begin > 1) std::sort(out + begin, out + start[b], BlockLess{g, t});
            begin = start[b];
        }
    }
}

}  // namespace

// ---- Sorter ------------------------------------------------------------------------------------

struct SimhashSorter {
    int ntables;
    double budget_bytes;
    Size n;
    SimhashEntryArray array;                         // in-memory mode
    Tuplesortstate *sorts[SIMHASH_MAX_TABLES];       // spilled mode: (key, tid) per table
    TupleDesc desc;
    TupleTableSlot *slot;
    SimhashGeometry g;                               // block shifts (dirbits unused)
};

namespace {

constexpr uint64 kSignBit = UINT64CONST(0x8000000000000000);

// Sort key of table t: the fingerprint rotated so that block t is on top, sign-flipped so that the
// signed int8 order is the unsigned order.
inline int64 table_key(int64 fp, int shift) {
    const uint64 x = static_cast<uint64>(fp);
    const uint64 rotated = shift ? (x << shift) | (x >> (64 - shift)) : x;
    return static_cast<int64>(rotated ^ kSignBit);
}
inline int64 key_fp(int64 key, int shift) {
    const uint64 rotated = static_cast<uint64>(key) ^ kSignBit;
    return static_cast<int64>(shift ? (rotated >> shift) | (rotated << (64 - shift)) : rotated);
}
inline int64 pack_tid(const ItemPointerData *tid) {
    return (static_cast<int64>(ItemPointerGetBlockNumberNoCheck(tid)) << 16) | ItemPointerGetOffsetNumberNoCheck(tid);
}

void sorter_put(SimhashSorter *s, int64 fp, const ItemPointerData *tid) {
    for (int t = 0; t < s->ntables; ++t) {
        ExecClearTuple(s->slot);
        s->slot->tts_values[0] = Int64GetDatum(table_key(fp, s->g.shift[t]));
        s->slot->tts_values[1] = Int64GetDatum(pack_tid(tid));
        s->slot->tts_isnull[0] = s->slot->tts_isnull[1] = false;
        ExecStoreVirtualTuple(s->slot);
        tuplesort_puttupleslot(s->sorts[t], s->slot);
    }
}

void sorter_spill(SimhashSorter *s) {
    s->desc = CreateTemplateTupleDesc(2);
    TupleDescInitEntry(s->desc, 1, "key", INT8OID, -1, 0);
    TupleDescInitEntry(s->desc, 2, "tid", INT8OID, -1, 0);
    s->slot = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
    AttrNumber column = 1;
    Oid less = Int8LessOperator;
    Oid collation = InvalidOid;
    bool nulls_first = false;
    const int work_mem_kb = Max(64, static_cast<int>(s->budget_bytes / 1024 / s->ntables));
    for (int t = 0; t < s->ntables; ++t)
        s->sorts[t] = tuplesort_begin_heap(s->desc, 1, &column, &less, &collation, &nulls_first, work_mem_kb, nullptr,
                                           TUPLESORT_NONE);
    for (Size i = 0; i < s->array.n; ++i) sorter_put(s, s->array.items[i].fp, &s->array.items[i].tid);
    pfree(s->array.items);
    s->array.items = nullptr;
    s->array.n = s->array.capacity = 0;
}

}  // namespace

SimhashSorter *simhash_sorter_begin(int ntables, int budget_kb, double expected) {
    SimhashSorter *s = static_cast<SimhashSorter *>(palloc0(sizeof(SimhashSorter)));
    s->ntables = ntables;
    s->budget_bytes = budget_kb * 1024.0;
    simhash_geometry(ntables, 0, &s->g);
    const double capacity = expected * 1.05 + 1024;
    if (expected > 0 && capacity * 2 * sizeof(SimhashEntry) <= s->budget_bytes) {
        s->array.capacity = static_cast<Size>(capacity);
        s->array.items = static_cast<SimhashEntry *>(
            MemoryContextAllocHuge(CurrentMemoryContext, s->array.capacity * sizeof(SimhashEntry)));
    }
    return s;
}

void simhash_sorter_add(SimhashSorter *s, int64 fp, ItemPointer tid) {
    s->n++;
    if (s->sorts[0]) {
        sorter_put(s, fp, tid);
        return;
    }
    // In memory: the entries plus the sorted copy of one table, 28 bytes per entry.
    if (static_cast<double>(s->n) * 2 * sizeof(SimhashEntry) > s->budget_bytes) {
        sorter_spill(s);
        sorter_put(s, fp, tid);
        return;
    }
    simhash_array_push(&s->array, fp, tid);
}

Size simhash_sorter_count(const SimhashSorter *s) { return s->n; }
bool simhash_sorter_spilled(const SimhashSorter *s) { return s->sorts[0] != nullptr; }

void simhash_sorter_end(SimhashSorter *s) {
    for (int t = 0; t < s->ntables; ++t)
        if (s->sorts[t]) tuplesort_end(s->sorts[t]);
    if (s->slot) ExecDropSingleTupleTableSlot(s->slot);
    if (s->array.items) pfree(s->array.items);
    pfree(s);
}

// ---- Writer ------------------------------------------------------------------------------------

void simhash_write_tables(Relation index, SimhashSorter *s, SimhashMetaData *meta, bool logged, bool progress) {
    const int ntables = meta->ntables;
    const Size n = s->n;
    Assert(ntables == s->ntables);
    for (int t = 0; t < SIMHASH_MAX_TABLES; ++t) {
        meta->tables[t].first = InvalidBlockNumber;
        meta->tables[t].npages = 0;
        meta->tables[t].ndirpages = 0;
    }
    meta->nentries = n;
    meta->dirbits = 0;
    if (n == 0) return;

    SimhashGeometry g;
    simhash_geometry(ntables, simhash_choose_dirbits(ntables, n), &g);
    meta->dirbits = static_cast<uint16>(g.dirbits);
    const Size nprefixes = Size{1} << g.dirbits;
    const bool spilled = simhash_sorter_spilled(s);
    SimhashEntry *sorted = spilled ? nullptr
                                   : static_cast<SimhashEntry *>(MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(SimhashEntry)));
    Size *buckets = static_cast<Size *>(palloc((nprefixes + 1) * sizeof(Size)));
    BlockNumber *dir = static_cast<BlockNumber *>(palloc(nprefixes * sizeof(BlockNumber)));
    PageWriter *w = static_cast<PageWriter *>(palloc(sizeof(PageWriter)));
    w->index = index;
    w->logged = logged;
    w->buffer = InvalidBuffer;
    w->blkno = InvalidBlockNumber;
    w->next_blkno = logged ? InvalidBlockNumber : smgrnblocks(RelationGetSmgr(index), MAIN_FORKNUM);
    w->nbatch = 0;
    if (progress) pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, static_cast<int64>(n) * ntables);

    for (int t = 0; t < ntables; ++t) {
        CHECK_FOR_INTERRUPTS();
        if (spilled)
            tuplesort_performsort(s->sorts[t]);
        else
            sort_by_block(s->array.items, sorted, n, &g, t, buckets);
        SimhashTable *table = &meta->tables[t];
        Size next_prefix = 0;
        BlockNumber current = InvalidBlockNumber;
        SimhashEntry *slots = nullptr;
        int used = SIMHASH_ENTRIES_PER_PAGE;  // no page yet
        for (Size pos = 0; pos < n; ++pos) {
            SimhashEntry entry;
            if (spilled) {
                if (!tuplesort_gettupleslot(s->sorts[t], true, false, s->slot, nullptr))
                    elog(ERROR, "simhash build: tuplesort ended early");
                bool isnull;
                entry.fp = key_fp(DatumGetInt64(slot_getattr(s->slot, 1, &isnull)), g.shift[t]);
                const int64 packed = DatumGetInt64(slot_getattr(s->slot, 2, &isnull));
                ItemPointerSet(&entry.tid, static_cast<BlockNumber>(packed >> 16), static_cast<OffsetNumber>(packed & 0xFFFF));
            } else {
                entry = sorted[pos];
            }
            if (used == static_cast<int>(SIMHASH_ENTRIES_PER_PAGE)) {
                if (slots) {
                    SimhashPageGetOpaque(w->image.data)->nentries = static_cast<uint16>(used);
                    set_lower(w->image.data, used * sizeof(SimhashEntry));
                }
                current = writer_start(w, SIMHASH_DATA, pos > 0);
                if (pos == 0) table->first = current;
                table->npages++;
                slots = SimhashPageGetEntries(w->image.data);
                used = 0;
                if (progress && (table->npages % 256) == 0)
                    pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, static_cast<int64>(t * n + pos));
            }
            slots[used++] = entry;
            const Size prefix = simhash_prefix(simhash_block(entry.fp, &g, t), &g, t);
            while (next_prefix <= prefix) dir[next_prefix++] = current;
        }
        SimhashPageGetOpaque(w->image.data)->nentries = static_cast<uint16>(used);
        set_lower(w->image.data, used * sizeof(SimhashEntry));
        while (next_prefix < nprefixes) dir[next_prefix++] = InvalidBlockNumber;
        for (Size first = 0; first < nprefixes; first += SIMHASH_DIR_PER_PAGE) {
            const Size count = Min(static_cast<Size>(SIMHASH_DIR_PER_PAGE), nprefixes - first);
            table->dir[table->ndirpages++] = writer_start(w, SIMHASH_DIR, false);
            Page image = w->image.data;
            memcpy(SimhashPageGetDir(image), dir + first, count * sizeof(BlockNumber));
            SimhashPageGetOpaque(image)->nentries = static_cast<uint16>(count);
            set_lower(image, count * sizeof(BlockNumber));
        }
        writer_flush(w, InvalidBlockNumber);
        if (!logged) writer_write_batch(w);
        if (progress) pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, static_cast<int64>((t + 1) * n));
    }
    pfree(w);
    pfree(dir);
    pfree(buckets);
    if (sorted) pfree(sorted);
}

namespace {

void build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive, void *state) {
    if (isnull[0]) return;  // NULL fingerprints are not indexed: no query ball contains them
    simhash_sorter_add(static_cast<SimhashSorter *>(state), DatumGetInt64(values[0]), tid);
}

}  // namespace

IndexBuildResult *simhash_ambuild(Relation heap, Relation index, IndexInfo *indexInfo) {
    if (RelationGetNumberOfBlocks(index) != 0)
        elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
    MemoryContext build_context = AllocSetContextCreate(CurrentMemoryContext, "simhash build", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old_context = MemoryContextSwitchTo(build_context);

    pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_LOAD);
    SimhashSorter *entries = simhash_sorter_begin(simhash_ntables(index), maintenance_work_mem, heap->rd_rel->reltuples);
    const double reltuples = table_index_build_scan(heap, index, indexInfo, true, true, build_callback, entries, nullptr);
    pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
    // The metapage goes first (as a placeholder), the tables after it, the final metapage last.
    PGAlignedBlock *meta_image = static_cast<PGAlignedBlock *>(palloc(sizeof(PGAlignedBlock)));
    simhash_fill_metapage(meta_image->data, simhash_ntables(index));
    smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, SIMHASH_METAPAGE_BLKNO, meta_image->data, true);
    simhash_write_tables(index, entries, SimhashPageGetMeta(meta_image->data), false, true);
    if (RelationNeedsWAL(index))
        log_newpage(&RelationGetSmgr(index)->smgr_rnode.node, MAIN_FORKNUM, SIMHASH_METAPAGE_BLKNO, meta_image->data, true);
    PageSetChecksumInplace(meta_image->data, SIMHASH_METAPAGE_BLKNO);
    smgrwrite(RelationGetSmgr(index), MAIN_FORKNUM, SIMHASH_METAPAGE_BLKNO, meta_image->data, true);
    // Written around shared buffers: a checkpoint would not flush them, so sync before commit.
    if (RelationNeedsWAL(index)) smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);

    IndexBuildResult *result = static_cast<IndexBuildResult *>(MemoryContextAlloc(old_context, sizeof(IndexBuildResult)));
    result->heap_tuples = reltuples;
    result->index_tuples = static_cast<double>(simhash_sorter_count(entries));
    simhash_sorter_end(entries);
    MemoryContextSwitchTo(old_context);
    MemoryContextDelete(build_context);
    return result;
}

void simhash_ambuildempty(Relation index) {
    PGAlignedBlock *image = static_cast<PGAlignedBlock *>(palloc(sizeof(PGAlignedBlock)));
    simhash_fill_metapage(image->data, simhash_ntables(index));
    PageSetChecksumInplace(image->data, SIMHASH_METAPAGE_BLKNO);
    smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, SIMHASH_METAPAGE_BLKNO, image->data, true);
    log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM, SIMHASH_METAPAGE_BLKNO, image->data, true);
    smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
    pfree(image);
}
