// ambuild / ambuildempty, and the writer of sorted runs shared with merges.
// A build writes its pages straight to the relation file and WAL-logs them as full pages
// (log_newpages, the per-batch form of log_newpage_range); a merge writes each new page through
// Generic WAL (full image).
//
// While they fit in maintenance_work_mem (16 bytes per entry), the entries are collected in memory
// and sorted in place by block 0 (core/radix_sort.h); table 0 written, the same memory holds the
// entries' keys in table-0 order and the refs of one table at a time, sorted in place by their
// block. Beyond the budget they go to one tuplesort per table (key: the fingerprint rotated so
// that the table's block is on top), which spills to disk. Pages are filled in table order. Blocks are cut from
// each fingerprint's key, its bits in an order chosen per run from the entries' bit statistics
// (simhash::choose_bit_permutation; the identity for uniform data).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <sys/mman.h>

#include "am/simhash_am.h"
#include "core/radix_sort.h"
#include "guard.h"

extern "C" {
#include "utils/builtins.h"
#include "utils/lsyscache.h"
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
    uint32 npages;            // pages started
    BlockNumber batch_blknos[kBatchPages];
    PGAlignedBlock image;
    PGAlignedBlock batch[kBatchPages];
};

void writer_write_batch(PageWriter *w) {
    if (w->nbatch == 0) return;
    Page pages[kBatchPages];
    for (int i = 0; i < w->nbatch; ++i) pages[i] = w->batch[i].data;
    if (RelationNeedsWAL(w->index))
        log_newpages(SIMHASH_RELATION_FILE(w->index), MAIN_FORKNUM, w->nbatch, w->batch_blknos, pages, true);
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
    w->npages++;
    w->buffer = buffer;
    w->blkno = blkno;
    simhash_init_page(w->image.data, flags);
    return blkno;
}

void set_lower(Page page, Size bytes) {
    reinterpret_cast<PageHeader>(page)->pd_lower = static_cast<LocationIndex>(MAXALIGN(SizeOfPageHeaderData) + bytes);
}

}  // namespace

// ---- Sorter ------------------------------------------------------------------------------------

struct SimhashSorter {
    int tables_option;
    int ntables;  // 0 until the key order is chosen
    double expected;
    double budget_bytes;
    Size n;
    SimhashEntryArray array;                   // in-memory mode
    Tuplesortstate *sort0;                     // spilled mode: (fp, tid) by fp (block 0 on top)
    Tuplesortstate *refs[SIMHASH_MAX_TABLES];  // spilled mode, while writing: refs of tables 1..m-1
    TupleDesc desc;
    TupleTableSlot *slot;
    // The run's key order, chosen from bit statistics of the entries (every entry of the first
    // 65,536, then one in 8) when the run is written, or when the entries spill (the tuplesort
    // sorts keys).
    simhash::BitCounts counts;
    bool order_chosen;
    simhash::BitPermutation order;
    const simhash::BitPermuter *permuter;  // null for the identity
};

namespace {

constexpr uint64 kSignBit = UINT64CONST(0x8000000000000000);
constexpr double kSpilledRunEntries = 1 << 20;
// In-memory bytes per entry: the entries (14 bytes), sorted in place; then, in the same memory,
// their keys and the refs of one table (8 bytes each). The entries' array is allocated at this size.
constexpr Size kBytesPerEntry = 2 * sizeof(uint64);
static_assert(sizeof(SimhashEntry) <= kBytesPerEntry, "an entry's place holds its key and one table's ref");

// Sign-flipped so that the signed int8 order is the unsigned order.
inline int64 unsigned_key(uint64 x) { return static_cast<int64>(x ^ kSignBit); }
inline uint64 from_unsigned_key(int64 key) { return static_cast<uint64>(key) ^ kSignBit; }
inline int64 pack_tid(const ItemPointerData *tid) {
    return (static_cast<int64>(ItemPointerGetBlockNumberNoCheck(tid)) << 16) | ItemPointerGetOffsetNumberNoCheck(tid);
}

// The spilled sorts hold pairs of int8 and sort by the first.
AttrNumber sort_column = 1;
Oid sort_less = Int8LessOperator;
Oid sort_collation = InvalidOid;
bool sort_nulls_first = false;

void sorter_put_pair(SimhashSorter *s, Tuplesortstate *sort, int64 key, int64 value) {
    ExecClearTuple(s->slot);
    s->slot->tts_values[0] = Int64GetDatum(key);
    s->slot->tts_values[1] = Int64GetDatum(value);
    s->slot->tts_isnull[0] = s->slot->tts_isnull[1] = false;
    ExecStoreVirtualTuple(s->slot);
    tuplesort_puttupleslot(sort, s->slot);
}

void sorter_put(SimhashSorter *s, int64 fp, const ItemPointerData *tid) {
    const uint64 key = s->permuter ? s->permuter->key(static_cast<uint64>(fp)) : static_cast<uint64>(fp);
    sorter_put_pair(s, s->sort0, unsigned_key(key), pack_tid(tid));
}

// `entries`: how many the run will hold, as far as is known.
void sorter_choose_order(SimhashSorter *s, double entries) {
    if (s->order_chosen) return;
    s->ntables = simhash_run_tables(s->tables_option, entries);
    SimhashGeometry g;
    simhash_geometry(s->ntables, 1, &g);
    simhash::choose_bit_permutation(s->counts, g.len, s->ntables, &s->order);
    s->permuter = simhash_new_permuter(s->order);
    s->order_chosen = true;
}

int sort_work_mem(const SimhashSorter *s, int parts) {
    return Max(64, static_cast<int>(s->budget_bytes / 1024 / parts));
}

void sorter_spill(SimhashSorter *s) {
    s->desc = CreateTemplateTupleDesc(2);
    TupleDescInitEntry(s->desc, 1, "key", INT8OID, -1, 0);
    TupleDescInitEntry(s->desc, 2, "tid", INT8OID, -1, 0);
    s->slot = MakeSingleTupleTableSlot(s->desc, &TTSOpsMinimalTuple);
    // The run's size is not known yet (reltuples may be unset, or stale): a run too large to sort
    // in memory is taken to be at least a million entries, where four tables are chosen, rather
    // than given the many short blocks of the entries collected so far.
    sorter_choose_order(s, Max(Max(static_cast<double>(s->n), s->expected), kSpilledRunEntries));
    // Half the budget; the refs' sorts get the other half while table 0 is written.
    s->sort0 = tuplesort_begin_heap(s->desc, 1, &sort_column, &sort_less, &sort_collation, &sort_nulls_first,
                                    sort_work_mem(s, 2), nullptr, TUPLESORT_NONE);
    for (Size i = 0; i < s->array.n; ++i) sorter_put(s, s->array.items[i].fp, &s->array.items[i].tid);
    pfree(s->array.items);
    s->array.items = nullptr;
    s->array.n = s->array.capacity = 0;
}

// Asks the kernel to back the entries' array with transparent huge pages where it grants them on
// request (Linux's THP "madvise" mode, the default of Debian and others; "always" needs no asking,
// "never" refuses). The in-place sort and the gathers of the ref tables touch the array at random,
// and with 4 kB pages nearly every touch of a multi-gigabyte array also misses the TLB: a
// 300M-row build took 122-132 s with 4 kB pages and 86-97 s with 2 MB ones. Only whole, aligned
// 2 MB pieces can be huge pages; the advice is only advice, and its failure changes nothing.
void advise_huge_pages(void *memory, Size bytes) {
#ifdef MADV_HUGEPAGE
    constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
    if (bytes < 4 * kHugePage) return;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(memory) + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(memory) + bytes) & ~(kHugePage - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#endif
}

// Allocates or grows the array of entries collected in memory to `capacity`.
void size_entries(SimhashEntryArray *a, Size capacity) {
    const Size bytes = capacity * kBytesPerEntry;
    a->items = static_cast<SimhashEntry *>(a->items ? repalloc_huge(a->items, bytes)
                                                    : MemoryContextAllocHuge(CurrentMemoryContext, bytes));
    advise_huge_pages(a->items, bytes);
    a->capacity = capacity;
}

}  // namespace

SimhashSorter *simhash_sorter_begin(int tables_option, int budget_kb, double expected) {
    SimhashSorter *s = static_cast<SimhashSorter *>(palloc0(sizeof(SimhashSorter)));
    s->tables_option = tables_option;
    s->expected = expected;
    s->budget_bytes = budget_kb * 1024.0;
    const double capacity = expected * 1.05 + 1024;
    if (expected > 0 && capacity * kBytesPerEntry <= s->budget_bytes) size_entries(&s->array, static_cast<Size>(capacity));
    return s;
}

void simhash_sorter_add(SimhashSorter *s, int64 fp, ItemPointer tid) {
    if (!s->order_chosen && (s->n < 65536 || (s->n & 7) == 0)) simhash::bit_counts_add(&s->counts, static_cast<uint64>(fp));
    s->n++;
    if (s->sort0) {
        sorter_put(s, fp, tid);
        return;
    }
    if (static_cast<double>(s->n) * kBytesPerEntry > s->budget_bytes) {
        sorter_spill(s);
        sorter_put(s, fp, tid);
        return;
    }
    SimhashEntryArray *a = &s->array;
    if (a->n == a->capacity) {
        // Doubling, but never past the budget: the entries are all the memory a run takes.
        const Size most = static_cast<Size>(s->budget_bytes / kBytesPerEntry) + 1;
        size_entries(a, Min(Max(a->capacity * 2, Size{1024}), most));
    }
    simhash_array_push(a, fp, tid);
}

Size simhash_sorter_count(const SimhashSorter *s) { return s->n; }
bool simhash_sorter_spilled(const SimhashSorter *s) { return s->sort0 != nullptr; }

void simhash_sorter_end(SimhashSorter *s) {
    if (s->sort0) tuplesort_end(s->sort0);
    for (int t = 0; t < s->ntables; ++t)
        if (s->refs[t]) tuplesort_end(s->refs[t]);
    if (s->slot) ExecDropSingleTupleTableSlot(s->slot);
    if (s->array.items) pfree(s->array.items);
    pfree(s);
}

// ---- Writer ------------------------------------------------------------------------------------

namespace {

// Fills the data pages of one table from a stream of items, and its directory.
struct TableWriter {
    PageWriter *w;
    const SimhashGeometry *g;
    int t;
    Size item_size;
    uint16 flags;
    Size per_page;
    SimhashTable *table;
    SimhashDirSlot *dir;
    Size next_prefix;
    BlockNumber current;
    char *slots;
    Size used;
    Size written;
    BlockNumber *pages;      // table 0: every page, for the page list
    BlockNumber *dir_pages;  // where the page list names the table's directory pages
};

void table_begin(TableWriter *tw, PageWriter *w, const SimhashGeometry *g, int t, SimhashTable *table, SimhashDirSlot *dir,
                 BlockNumber *pages, BlockNumber *dir_pages) {
    tw->w = w;
    tw->g = g;
    tw->t = t;
    tw->item_size = t == 0 ? sizeof(SimhashEntry) : sizeof(SimhashRef);
    tw->flags = t == 0 ? SIMHASH_DATA : SIMHASH_REF;
    tw->per_page = t == 0 ? SIMHASH_ENTRIES_PER_PAGE : SIMHASH_REFS_PER_PAGE;
    tw->table = table;
    tw->dir = dir;
    tw->next_prefix = 0;
    tw->current = InvalidBlockNumber;
    tw->slots = nullptr;
    tw->used = tw->per_page;  // no page yet
    tw->written = 0;
    tw->pages = pages;
    tw->dir_pages = dir_pages;
}

void table_close_page(TableWriter *tw) {
    if (!tw->slots) return;
    SimhashPageGetOpaque(tw->w->image.data)->nentries = static_cast<uint16>(tw->used);
    if (tw->t == 0)  // fingerprints up from the header, TIDs down from the special space
        simhash_page_set_bounds(tw->w->image.data, static_cast<int>(tw->used));
    else
        set_lower(tw->w->image.data, tw->used * tw->item_size);
}

void table_add(TableWriter *tw, const void *item, uint32 block) {
    if (tw->used == tw->per_page) {
        table_close_page(tw);
        tw->current = writer_start(tw->w, tw->flags, tw->written > 0);
        if (tw->written == 0) tw->table->first = tw->current;
        if (tw->pages) tw->pages[tw->table->npages] = tw->current;
        tw->table->npages++;
        tw->slots = PageGetContents(tw->w->image.data);
        tw->used = 0;
    }
    const Size prefix = simhash_prefix(block, tw->g, tw->t);
    while (tw->next_prefix <= prefix) {
        SimhashDirSlot *slot = &tw->dir[tw->next_prefix++];
        slot->blkno = tw->current;
        slot->offset = static_cast<uint16>(tw->used);
        slot->unused = 0;
    }
    if (tw->t == 0) {
        const SimhashEntry *entry = static_cast<const SimhashEntry *>(item);
        SimhashPageGetFps(tw->w->image.data)[tw->used] = entry->fp;
        *simhash_page_tid(tw->w->image.data, static_cast<int>(tw->used)) = entry->tid;
    } else {
        memcpy(tw->slots + tw->used * tw->item_size, item, tw->item_size);
    }
    tw->used++;
    tw->written++;
}

// Writes `count` items of `item_size` bytes, `per_page` to a page of `flags`, recording the pages
// in `out` (directories and map pages).
template <typename Item>
uint32 write_array(PageWriter *w, const Item *items, Size count, uint16 flags, BlockNumber *out) {
    constexpr Size per_page = SIMHASH_PAGE_SPACE / sizeof(Item);
    uint32 npages = 0;
    for (Size first = 0; first < count; first += per_page) {
        const Size chunk = Min(per_page, count - first);
        out[npages++] = writer_start(w, flags, false);
        Page image = w->image.data;
        memcpy(PageGetContents(image), items + first, chunk * sizeof(Item));
        SimhashPageGetOpaque(image)->nentries = static_cast<uint16>(chunk);
        set_lower(image, chunk * sizeof(Item));
    }
    return npages;
}

// Closes the table and writes its directory: 2^dirbits slots of the table.
void table_finish(TableWriter *tw) {
    const Size nprefixes = Size{1} << tw->g->dirbits[tw->t];
    table_close_page(tw);
    while (tw->next_prefix < nprefixes) {
        SimhashDirSlot *slot = &tw->dir[tw->next_prefix++];
        slot->blkno = InvalidBlockNumber;
        slot->offset = slot->unused = 0;
    }
    tw->table->ndirpages = write_array(tw->w, tw->dir, nprefixes, SIMHASH_DIR, tw->dir_pages);
    writer_flush(tw->w, InvalidBlockNumber);
    if (!tw->w->logged) writer_write_batch(tw->w);
}

// Sorts items in place by the top `bits` bits of their keys (core/radix_sort.h), stopping at a
// query cancel: a sort of hundreds of millions of entries takes seconds. The guard raises the
// cancel once the sort has unwound (no longjmp crosses it).
template <typename T, typename KeyOf>
void sort_entries(T *items, Size n, int bits, KeyOf key_of) {
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    simhash_pg::run_guarded("the sort of a simhash index run",
                            [&] { simhash::radix_sort_top_bits(items, n, bits, key_of, &poll); });
}

}  // namespace

void simhash_write_run(Relation index, SimhashSorter *s, bool logged, bool progress, uint64 serial, SimhashRunSlot *slot) {
    const Size n = s->n;
    Assert(n > 0);
    sorter_choose_order(s, static_cast<double>(n));
    const int ntables = s->ntables;
    SimhashRunData *meta = static_cast<SimhashRunData *>(palloc0(sizeof(SimhashRunData)));
    for (int t = 0; t < SIMHASH_MAX_TABLES; ++t) meta->tables[t].first = InvalidBlockNumber;
    meta->serial = serial;
    meta->nentries = n;
    meta->ntables = static_cast<uint16>(ntables);
    const Size table0_pages = (n + SIMHASH_ENTRIES_PER_PAGE - 1) / SIMHASH_ENTRIES_PER_PAGE;
    if (n > PG_UINT32_MAX)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash index \"%s\" cannot hold %zu entries in one run", RelationGetRelationName(index), n)));

    // The run's blocks are cut from keys (simhash_key: the fingerprint's bits in the run's order).
    // Each entry's key is computed once, and the sorts and tables below work on keys with the
    // identity geometry `kg`: a permutation costs eight table lookups, and otherwise every
    // comparison of the sort and every table's pass would pay them again (a skewed run's merges
    // took twice a uniform one's time). Table 0 stores fingerprints, turned back from keys.
    SimhashGeometry kg;
    const int dirbits = simhash_choose_dirbits(ntables, n);
    simhash_geometry(ntables, dirbits, &kg);
    simhash_set_ref_tail(&kg, simhash_choose_ref_tail_bits(dirbits, n));
    const simhash::BitPermuter *permuter = s->permuter;
    meta->key_order = s->order;
    meta->dirbits = static_cast<uint16>(dirbits);
    const bool spilled = simhash_sorter_spilled(s);
    // One directory at a time, table 0's the largest.
    SimhashDirSlot *dir = static_cast<SimhashDirSlot *>(palloc((Size{1} << kg.dirbits[0]) * sizeof(SimhashDirSlot)));
    // The page list: table 0's pages, then every table's directory pages.
    Size dir_list_index[SIMHASH_MAX_TABLES];
    Size list_length = table0_pages;
    for (int t = 0; t < ntables; ++t) {
        dir_list_index[t] = list_length;
        list_length += simhash_dir_pages(kg.dirbits[t]);
    }
    if (list_length > static_cast<Size>(SIMHASH_MAX_MAP_PAGES) * SIMHASH_MAP_PER_PAGE)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash index \"%s\" cannot hold %zu entries in one run", RelationGetRelationName(index), n)));
    BlockNumber *page_list = static_cast<BlockNumber *>(MemoryContextAllocHuge(CurrentMemoryContext, list_length * sizeof(BlockNumber)));
    PageWriter *w = static_cast<PageWriter *>(palloc(sizeof(PageWriter)));
    w->index = index;
    w->logged = logged;
    w->buffer = InvalidBuffer;
    w->blkno = InvalidBlockNumber;
    w->next_blkno = logged ? InvalidBlockNumber : smgrnblocks(RelationGetSmgr(index), MAIN_FORKNUM);
    w->nbatch = 0;
    w->npages = 0;
    TableWriter tw;
    if (progress) pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_TOTAL, static_cast<int64>(n) * ntables);

    // Table 0: the full entries, sorted by block 0. The refs of the other tables are made on the way.
    SimhashEntry *sorted = nullptr;
    if (spilled) {
        tuplesort_performsort(s->sort0);
        for (int t = 1; t < ntables; ++t)
            s->refs[t] = tuplesort_begin_heap(s->desc, 1, &sort_column, &sort_less, &sort_collation, &sort_nulls_first,
                                              sort_work_mem(s, 2 * (ntables - 1)), nullptr, TUPLESORT_NONE);
    } else {
        SimhashEntry *items = s->array.items;  // from here on, keys in place of fingerprints
        if (permuter)
            for (Size i = 0; i < n; ++i) items[i].fp = static_cast<int64>(simhash_key(items[i].fp, permuter));
        // Block 0 is the key's top.
        sort_entries(items, n, kg.len[0], [](const SimhashEntry &e) { return static_cast<uint64_t>(e.fp); });
        sorted = items;
    }
    table_begin(&tw, w, &kg, 0, &meta->tables[0], dir, page_list, page_list + dir_list_index[0]);
    for (Size pos = 0; pos < n; ++pos) {
        SimhashEntry entry;  // its key, then its fingerprint
        if (spilled) {
            if (!tuplesort_gettupleslot(s->sort0, true, false, s->slot, nullptr))
                elog(ERROR, "simhash build: tuplesort ended early");
            bool isnull;
            entry.fp = static_cast<int64>(from_unsigned_key(DatumGetInt64(slot_getattr(s->slot, 1, &isnull))));
            const int64 packed = DatumGetInt64(slot_getattr(s->slot, 2, &isnull));
            ItemPointerSet(&entry.tid, static_cast<BlockNumber>(packed >> 16), static_cast<OffsetNumber>(packed & 0xFFFF));
            for (int t = 1; t < ntables; ++t)  // (rotation, position): sorted by block t, then the rest
                sorter_put_pair(s, s->refs[t], unsigned_key(simhash_rotation(entry.fp, &kg, t)), static_cast<int64>(pos));
        } else {
            entry = sorted[pos];
        }
        const uint32 block = simhash_block(entry.fp, &kg, 0);
        if (permuter) entry.fp = static_cast<int64>(permuter->fingerprint(static_cast<uint64>(entry.fp)));
        table_add(&tw, &entry, block);
        if (progress && (pos & 0xFFFF) == 0) pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, static_cast<int64>(pos));
        if ((pos & 0xFFFF) == 0) CHECK_FOR_INTERRUPTS();
    }
    table_finish(&tw);
    if (spilled) {
        tuplesort_end(s->sort0);
        s->sort0 = nullptr;
    }

    // Tables 1..m-1: refs sorted by their block. In memory, the entries' array now holds their keys
    // in table-0 order in its first 8n bytes (written front to back: key i lands on entries 0..i,
    // already read) and the refs of one table in the next 8n.
    uint64 *keys = nullptr, *refs = nullptr;
    if (!spilled) {
        char *memory = reinterpret_cast<char *>(sorted);  // palloc'd: aligned for the keys
        for (Size pos = 0; pos < n; ++pos) {
            uint64 key;
            memcpy(&key, memory + pos * sizeof(SimhashEntry) + offsetof(SimhashEntry, fp), sizeof(key));
            memcpy(memory + pos * sizeof(uint64), &key, sizeof(key));
        }
        keys = reinterpret_cast<uint64 *>(memory);
        sorted = nullptr;
        refs = keys + n;
    }
    for (int t = 1; t < ntables; ++t) {
        if (spilled) {
            tuplesort_performsort(s->refs[t]);
        } else {
            for (Size pos = 0; pos < n; ++pos)  // block t on top, then the position
                refs[pos] = ((simhash_rotation(static_cast<int64>(keys[pos]), &kg, t) >> 32) << 32) | pos;
            sort_entries(refs, n, kg.len[t], [](uint64 ref) { return static_cast<uint64_t>(ref); });
        }
        table_begin(&tw, w, &kg, t, &meta->tables[t], dir, nullptr, page_list + dir_list_index[t]);
        meta->tables[t].ref_tail_bits = static_cast<uint32>(kg.ref_tail_bits);
        for (Size i = 0; i < n; ++i) {
            uint64 rotation;
            uint32 position;
            if (spilled) {
                if (!tuplesort_gettupleslot(s->refs[t], true, false, s->slot, nullptr))
                    elog(ERROR, "simhash build: tuplesort ended early");
                bool isnull;
                rotation = from_unsigned_key(DatumGetInt64(slot_getattr(s->slot, 1, &isnull)));
                position = static_cast<uint32>(DatumGetInt64(slot_getattr(s->slot, 2, &isnull)));
            } else {
                // The refs come in block order, their keys in table-0 order: each key is a cache
                // miss at random (80 MB at 10M rows), asked for this far ahead.
                constexpr Size kAhead = 16;
                if (i + kAhead < n) __builtin_prefetch(&keys[static_cast<uint32>(refs[i + kAhead])]);
                position = static_cast<uint32>(refs[i]);
                rotation = simhash_rotation(static_cast<int64>(keys[position]), &kg, t);
            }
            SimhashRef ref;
            ref.key = simhash_rotation_ref_key(rotation, &kg, t);
            ref.pos = simhash_ref_word(position, simhash_rotation_ref_tail(rotation, &kg, t), &kg);
            table_add(&tw, &ref, simhash_rotation_block(rotation, &kg, t));
            if ((i & 0xFFFF) == 0) CHECK_FOR_INTERRUPTS();
        }
        table_finish(&tw);
        if (spilled) {
            tuplesort_end(s->refs[t]);
            s->refs[t] = nullptr;
        }
        if (progress) pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, static_cast<int64>((t + 1) * n));
    }
    // The page list, once every page of it is written.
    meta->nmappages = write_array(w, page_list, list_length, SIMHASH_MAP, meta->map);
    writer_flush(w, InvalidBlockNumber);
    if (!logged) writer_write_batch(w);
    // The header last: a merge publishes the run by naming it in the metapage.
    const BlockNumber header = writer_start(w, SIMHASH_RUN, false);
    memcpy(SimhashPageGetRun(w->image.data), meta, sizeof(SimhashRunData));
    set_lower(w->image.data, sizeof(SimhashRunData));
    writer_flush(w, InvalidBlockNumber);
    if (!logged) writer_write_batch(w);
    slot->serial = serial;
    slot->header = header;
    slot->npages = w->npages;
    slot->nentries = n;
    slot->ndead = 0;
    slot->table0_pages = meta->tables[0].npages;
    slot->ntables = meta->ntables;
    slot->dirbits = meta->dirbits;
    double block_bits[SIMHASH_MAX_TABLES];
    simhash::block_entropy_bits(s->counts, s->order, kg.len, ntables, block_bits);
    for (int t = 0; t < SIMHASH_MAX_TABLES; ++t)
        slot->block_bits[t] = static_cast<uint8>(t < ntables ? Max(1.0, std::floor(block_bits[t] + 0.5)) : 0);
    pfree(meta);
    pfree(w);
    pfree(dir);
    pfree(page_list);
}

namespace {

void build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive, void *state) {
    int64 fp;
    ItemPointerData entry_tid;
    simhash_entry_for(values[0], isnull[0], tid, &fp, &entry_tid);
    simhash_sorter_add(static_cast<SimhashSorter *>(state), fp, &entry_tid);
}

}  // namespace

IndexBuildResult *simhash_ambuild(Relation heap, Relation index, IndexInfo *indexInfo) {
    if (RelationGetNumberOfBlocks(index) != 0)
        elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
    // An operator class of another type passes CREATE OPERATOR CLASS (its members are bigint's):
    // the index reads every key as a bigint.
    const Oid key_type = getBaseType(TupleDescAttr(RelationGetDescr(index), 0)->atttypid);
    if (key_type != INT8OID)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("simhash index \"%s\" must index a bigint, not %s", RelationGetRelationName(index),
                               format_type_be(key_type))));
    MemoryContext build_context = AllocSetContextCreate(CurrentMemoryContext, "simhash build", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old_context = MemoryContextSwitchTo(build_context);

    pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_LOAD);
    const int tables_option = simhash_tables_option(index);
    SimhashSorter *entries = simhash_sorter_begin(tables_option, maintenance_work_mem, heap->rd_rel->reltuples);
    const double reltuples = table_index_build_scan(heap, index, indexInfo, true, true, build_callback, entries, nullptr);
    pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_PHASE_WRITE);
    // The metapage goes first (as a placeholder), the run after it, the final metapage last.
    PGAlignedBlock *meta_image = static_cast<PGAlignedBlock *>(palloc(sizeof(PGAlignedBlock)));
    simhash_fill_metapage(meta_image->data, tables_option);
    smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, SIMHASH_METAPAGE_BLKNO, meta_image->data, true);
    if (simhash_sorter_count(entries) > 0) {
        SimhashMetaData *meta = SimhashPageGetMeta(meta_image->data);
        simhash_write_run(index, entries, false, true, 0, &meta->runs[0]);
        meta->nruns = 1;
    }
    if (RelationNeedsWAL(index))
        log_newpage(SIMHASH_RELATION_FILE(index), MAIN_FORKNUM, SIMHASH_METAPAGE_BLKNO, meta_image->data, true);
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
    simhash_fill_metapage(image->data, simhash_tables_option(index));
    PageSetChecksumInplace(image->data, SIMHASH_METAPAGE_BLKNO);
    smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, SIMHASH_METAPAGE_BLKNO, image->data, true);
    log_newpage(SIMHASH_RELATION_FILE(index), INIT_FORKNUM, SIMHASH_METAPAGE_BLKNO, image->data, true);
    smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
    pfree(image);
}
