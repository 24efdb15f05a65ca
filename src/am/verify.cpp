// simhash_index_check(index regclass, concurrently boolean): amcheck-style verification. Checks the metapage, the page
// ID and kind of every page, that no page is in two structures (runs, pending lists, retired
// sets), for every run its header against the metapage, the sort order and directory of every
// table, the map of table 0, that the refs of every other table name each entry of table 0 once
// with the right bits, the entry and tombstone counts, and that every
// heap tuple the index must contain (live or recently dead, non-NULL fingerprint) is in it. Holds a
// ShareLock on the table, so the index cannot change meanwhile; with concurrently, AccessShareLock
// (writers go on; works on a hot standby) and the heap tuples of an MVCC snapshot. Only the
// table's owner may run it. Errors: ERRCODE_INDEX_CORRUPTED.
#include "am/simhash_am.h"
#include "guard.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

namespace {

int compare_entries(const void *a, const void *b) {
    const SimhashEntry *x = static_cast<const SimhashEntry *>(a);
    const SimhashEntry *y = static_cast<const SimhashEntry *>(b);
    if (x->fp != y->fp) return x->fp < y->fp ? -1 : 1;
    ItemPointerData tx = x->tid, ty = y->tid;
    return ItemPointerCompare(&tx, &ty);
}

void corrupted(Relation index, const char *detail) {
    ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                    errmsg("simhash index \"%s\" is corrupted", RelationGetRelationName(index)),
                    errdetail_internal("%s", detail)));
}

struct CheckState {
    Relation index;
    uint8 *owner;  // per block: 0 = not in a chain yet
    BlockNumber nblocks;
    BlockNumber claimed;  // blocks owned so far
    SimhashEntryArray all;  // live entries of the runs and pending lists, sorted by (fp, tid)
    double heap_checked;
};

// Records that a structure reaches `blkno`; each block may be reached once.
void claim(CheckState *s, BlockNumber blkno) {
    if (blkno >= s->nblocks) corrupted(s->index, psprintf("chain points to block %u beyond the end (%u blocks)", blkno, s->nblocks));
    if (s->owner[blkno]) corrupted(s->index, psprintf("block %u is reachable twice", blkno));
    s->owner[blkno] = 1;
    s->claimed++;
}

Page read_page(CheckState *s, BlockNumber blkno, uint16 flags, Buffer *buffer) {
    claim(s, blkno);
    *buffer = ReadBuffer(s->index, blkno);
    LockBuffer(*buffer, BUFFER_LOCK_SHARE);
    Page page = BufferGetPage(*buffer);
    simhash_check_page(s->index, page, blkno, flags);
    if (PageGetSpecialSize(page) != MAXALIGN(sizeof(SimhashPageOpaque)))
        corrupted(s->index, psprintf("block %u has a special space of %u bytes", blkno,
                                     static_cast<unsigned>(PageGetSpecialSize(page))));
    if (SimhashPageGetOpaque(page)->flags != flags)
        corrupted(s->index, psprintf("block %u has flags 0x%x, expected 0x%x", blkno, SimhashPageGetOpaque(page)->flags, flags));
    const Size capacity = flags == SIMHASH_DIR   ? SIMHASH_DIRSLOTS_PER_PAGE
                          : flags == SIMHASH_MAP ? SIMHASH_MAP_PER_PAGE
                          : flags == SIMHASH_REF ? SIMHASH_REFS_PER_PAGE
                          : flags == SIMHASH_RUN ? 0
                                                 : SIMHASH_ENTRIES_PER_PAGE;
    if (SimhashPageGetOpaque(page)->nentries > capacity)
        corrupted(s->index, psprintf("block %u claims %u entries", blkno, SimhashPageGetOpaque(page)->nentries));
    return page;
}

inline bool same_slot(const SimhashDirSlot &a, const SimhashDirSlot &b) {
    return a.blkno == b.blkno && (a.blkno == InvalidBlockNumber || a.offset == b.offset);
}

// Checks the pages of a directory against the expected slots.
void check_directory_pages(CheckState *s, const BlockNumber *pages, uint32 npages, Size count,
                           const SimhashDirSlot *expected, const char *what) {
    constexpr Size per_page = SIMHASH_DIRSLOTS_PER_PAGE;
    for (uint32 d = 0; d < npages; ++d) {
        Buffer buffer;
        Page page = read_page(s, pages[d], SIMHASH_DIR, &buffer);
        const SimhashDirSlot *slots = SimhashPageGetDirSlots(page);
        const Size first = Size{d} * per_page;
        const Size n = Min(per_page, count - first);
        if (SimhashPageGetOpaque(page)->nentries != n)
            corrupted(s->index, psprintf("%s page %u has %u slots, expected %zu", what, pages[d], SimhashPageGetOpaque(page)->nentries, n));
        for (Size i = 0; i < n; ++i)
            if (!same_slot(slots[i], expected[first + i]))
                corrupted(s->index, psprintf("%s slot %zu names block %u offset %d instead of block %u offset %d", what,
                                             first + i, slots[i].blkno, slots[i].offset, expected[first + i].blkno,
                                             expected[first + i].offset));
        UnlockReleaseBuffer(buffer);
    }
}

// The run's page list, from its map pages (each claimed as the run's).
BlockNumber *read_page_list(CheckState *s, const SimhashRunData *run) {
    const Size length = simhash_page_list_length(run);
    BlockNumber *list = static_cast<BlockNumber *>(palloc(Max(length, 1) * sizeof(BlockNumber)));
    for (uint32 m = 0; m < run->nmappages; ++m) {
        Buffer buffer;
        Page page = read_page(s, run->map[m], SIMHASH_MAP, &buffer);
        const Size first = Size{m} * SIMHASH_MAP_PER_PAGE;
        const Size n = Min(static_cast<Size>(SIMHASH_MAP_PER_PAGE), length - first);
        if (SimhashPageGetOpaque(page)->nentries != n)
            corrupted(s->index, psprintf("map page %u has %u entries, expected %zu", run->map[m],
                                         SimhashPageGetOpaque(page)->nentries, n));
        memcpy(list + first, SimhashPageGetMap(page), n * sizeof(BlockNumber));
        UnlockReleaseBuffer(buffer);
    }
    return list;
}

// A chain of table t: pages, sort order, directory; table 0 (full entries, full pages) is appended
// to `table0` in position order and the page list must name its pages in order; the refs of the
// other tables must name every position of table 0 once, with the right 32 bits.
void check_table(CheckState *s, const SimhashRunData *meta, const BlockNumber *page_list, const SimhashGeometry *g, int t,
                 SimhashEntryArray *table0) {
    const SimhashTable *table = &meta->tables[t];
    const Size nprefixes = Size{1} << g->dirbits[t];
    const uint16 flags = t == 0 ? SIMHASH_DATA : SIMHASH_REF;
    // The chain's pages (for the map) and, per prefix, where its first entry (or the next
    // prefix's) sits (for the directory).
    BlockNumber *chain = static_cast<BlockNumber *>(palloc((table->npages + 1) * sizeof(BlockNumber)));
    SimhashDirSlot *expected = static_cast<SimhashDirSlot *>(palloc0(nprefixes * sizeof(SimhashDirSlot)));
    Size next_prefix = 0;
    uint8 *seen = t == 0 ? nullptr : static_cast<uint8 *>(palloc0(Max(table0->n, 1)));
    uint32 npages = 0;
    uint32 previous = 0;
    Size items = 0;
    for (BlockNumber blkno = table->first; blkno != InvalidBlockNumber;) {
        CHECK_FOR_INTERRUPTS();
        if (npages >= table->npages) corrupted(s->index, psprintf("table %d has more than %u pages", t, table->npages));
        Buffer buffer;
        Page page = read_page(s, blkno, flags, &buffer);
        const int n = SimhashPageGetOpaque(page)->nentries;
        const BlockNumber next = SimhashPageGetOpaque(page)->next;
        if (n == 0) corrupted(s->index, psprintf("table %d has an empty data page %u", t, blkno));
        if (t == 0 && next != InvalidBlockNumber && n != static_cast<int>(SIMHASH_ENTRIES_PER_PAGE))
            corrupted(s->index, psprintf("table 0 page %u is not full", blkno));
        for (int i = 0; i < n; ++i, ++items) {
            uint32 block;
            if (t == 0) {
                const int64 fp = SimhashPageGetFps(page)[i];
                block = simhash_block(fp, g, 0);
                ItemPointerData tid = *simhash_page_tid(page, i);
                simhash_array_push(table0, fp, &tid);
            } else {
                const SimhashRef ref = SimhashPageGetRefs(page)[i];
                const uint32 position = simhash_ref_position(ref.pos, g);
                if (position >= table0->n || seen[position])
                    corrupted(s->index, psprintf("table %d block %u entry %d names position %u %s", t, blkno, i, position,
                                                 position >= table0->n ? "beyond table 0" : "twice"));
                seen[position] = 1;
                const int64 fp = table0->items[position].fp;
                const SimhashRefBits expected = simhash_ref_bits(fp, g, t);
                if (ref.key != expected.key || simhash_ref_stored_tail(ref.pos, g) != expected.tail)
                    corrupted(s->index, psprintf("table %d block %u entry %d does not match table 0", t, blkno, i));
                block = simhash_block(fp, g, t);
            }
            if (block < previous)
                corrupted(s->index, psprintf("table %d is out of order at block %u, entry %d", t, blkno, i));
            previous = block;
            const Size prefix = simhash_prefix(block, g, t);
            while (next_prefix <= prefix) {
                expected[next_prefix].blkno = blkno;
                expected[next_prefix++].offset = static_cast<uint16>(i);
            }
        }
        chain[npages] = blkno;
        npages++;
        blkno = next;
        UnlockReleaseBuffer(buffer);
    }
    if (items != meta->nentries)
        corrupted(s->index, psprintf("table %d has %zu entries, run header says " UINT64_FORMAT, t, items, meta->nentries));
    if (npages != table->npages) corrupted(s->index, psprintf("table %d has %u pages, run header says %u", t, npages, table->npages));

    // Directory: slot p names the page and offset of the first entry whose prefix is >= p.
    while (next_prefix < nprefixes) expected[next_prefix++].blkno = InvalidBlockNumber;
    check_directory_pages(s, page_list + simhash_dir_list_index(meta, t, 0), table->ndirpages, nprefixes, expected,
                          psprintf("directory of table %d", t));
    if (t == 0)
        for (uint32 i = 0; i < npages; ++i)
            if (page_list[i] != chain[i])
                corrupted(s->index, psprintf("the page list names block %u as table-0 page %u, which is block %u",
                                             page_list[i], i, chain[i]));
    pfree(expected);
    pfree(chain);
    if (seen) pfree(seen);
}

uint64 check_pending(CheckState *s, BlockNumber blkno, BlockNumber tail, uint32 *npages) {
    uint64 n = 0;
    *npages = 0;
    BlockNumber last = InvalidBlockNumber;
    while (blkno != InvalidBlockNumber) {
        CHECK_FOR_INTERRUPTS();
        Buffer buffer;
        Page page = read_page(s, blkno, SIMHASH_PENDING, &buffer);
        const int64 *fps = SimhashPageGetFps(page);
        for (int i = 0; i < SimhashPageGetOpaque(page)->nentries; ++i) {
            ItemPointerData tid = *simhash_page_tid(page, i);
            if (!simhash_tid_is_dead(&tid)) simhash_array_push(&s->all, fps[i], &tid);
            n++;
        }
        (*npages)++;
        last = blkno;
        blkno = SimhashPageGetOpaque(page)->next;
        UnlockReleaseBuffer(buffer);
    }
    if (tail != InvalidBlockNumber && last != tail)
        corrupted(s->index, psprintf("pending chain ends at block %u, metapage says %u", last, tail));
    return n;
}

// One run: header against its slot, every table, tombstone count; its live entries go to s->all.
void check_run(CheckState *s, const SimhashRunSlot *slot, int number) {
    Buffer buffer;
    Page page = read_page(s, slot->header, SIMHASH_RUN, &buffer);
    SimhashRunData *run = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    memcpy(run, SimhashPageGetRun(page), sizeof(SimhashRunData));
    UnlockReleaseBuffer(buffer);
    if (!simhash_run_header_valid(run, slot))
        corrupted(s->index, psprintf("run %d (header block %u) does not match its metapage slot", number, slot->header));
    SimhashGeometry g;
    simhash_run_geometry(run, &g);
    g.permuter = simhash_new_permuter(run->key_order);  // (the header's order was checked above)
    SimhashEntryArray table0 = {};
    BlockNumber *page_list = read_page_list(s, run);
    check_table(s, run, page_list, &g, 0, &table0);  // position order, as the refs need
    for (int t = 1; t < run->ntables; ++t) check_table(s, run, page_list, &g, t, &table0);
    pfree(page_list);
    uint64 dead = 0;
    for (Size i = 0; i < table0.n; ++i) {
        ItemPointerData tid = table0.items[i].tid;
        if (simhash_tid_is_dead(&tid))
            dead++;
        else
            simhash_array_push(&s->all, table0.items[i].fp, &tid);
    }
    // More tombstones than counted is what a VACUUM that crashed between marking pages and
    // updating the metapage leaves; the next VACUUM counts them again.
    if (dead < slot->ndead)
        corrupted(s->index, psprintf("run %d has " UINT64_FORMAT " tombstones, metapage says " UINT64_FORMAT, number, dead, slot->ndead));
    if (table0.items) pfree(table0.items);
    pfree(run);
}

void claim_visitor(BlockNumber blkno, void *arg) { claim(static_cast<CheckState *>(arg), blkno); }

void heap_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool tupleIsAlive, void *state) {
    CheckState *s = static_cast<CheckState *>(state);
    SimhashEntry key;
    int64 fp;
    ItemPointerData entry_tid;
    simhash_entry_for(values[0], isnull[0], tid, &fp, &entry_tid);
    key.fp = fp;
    key.tid = entry_tid;
    s->heap_checked += 1;
    if (!bsearch(&key, s->all.items, s->all.n, sizeof(SimhashEntry), compare_entries))
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("heap tuple (%u,%u) with fingerprint %s is missing from simhash index \"%s\"",
                               ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
                               isnull[0] ? "NULL" : psprintf(INT64_FORMAT, fp), RelationGetRelationName(index))));
}

// An index that an update of the extension recorded as holding values of an earlier definition
// (simhash_reindex_needed, while the index keeps the relfilenode it had then) lacks the rows' new
// fingerprints: said as such, rather than as rows missing from a corrupted index. The table is in
// the extension's schema, where this function is.
void refuse_index_needing_reindex(Relation index, Oid extension_schema) {
    const Oid table_oid = get_relname_relid("simhash_reindex_needed", extension_schema);
    if (!OidIsValid(table_oid)) return;  // an installation updated to 0.3.0 by its first script
    Relation table = table_open(table_oid, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(RelationGetRelid(index)));
    SysScanDesc scan = systable_beginscan(table, InvalidOid, false, nullptr, 1, &key);
    char *reason = nullptr;
    HeapTuple tuple;
    while (reason == nullptr && HeapTupleIsValid(tuple = systable_getnext(scan))) {
        bool isnull[3];
        Datum values[3];
        heap_deform_tuple(tuple, RelationGetDescr(table), values, isnull);
        if (!isnull[1] && !isnull[2] && DatumGetObjectId(values[1]) == index->rd_rel->relfilenode)
            reason = TextDatumGetCString(values[2]);
    }
    systable_endscan(scan);
    table_close(table, AccessShareLock);
    if (reason != nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("index \"%s\" was built with fingerprints of an earlier version of simhash and needs "
                               "REINDEX",
                               RelationGetRelationName(index)),
                        errdetail("ALTER EXTENSION simhash UPDATE recorded it: %s.", reason),
                        errhint("REINDEX INDEX %s; rebuilds it (REINDEX INDEX CONCURRENTLY while writes go on).",
                                quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
                                                           RelationGetRelationName(index)))));
}

}  // namespace

SIMHASH_FUNCTION(simhash_index_check) {
    const Oid indexoid = PG_GETARG_OID(0);
    const bool concurrently = PG_GETARG_BOOL(1);
    simhash_check_index_argument(indexoid);
    const Oid heapoid = IndexGetRelation(indexoid, false);
    // The check reads every fingerprint and (without concurrently) holds writers off the table:
    // only the table's owner may do that. An index has its table's owner.
    if (!simhash_relation_ownercheck(indexoid, GetUserId()))
        aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, get_rel_name(indexoid));
    // Without concurrently, ShareLock keeps the index from changing during the whole check. With
    // it, AccessShareLock (as a scan; also on a hot standby): the structure is read under the
    // metapage's share lock, as scans read it, and the heap is compared through an MVCC snapshot
    // taken before the index is read, so every row it shows must already be indexed.
    const LOCKMODE heap_lock = concurrently ? AccessShareLock : ShareLock;
    Relation heap = table_open(heapoid, heap_lock);
    Relation index = index_open(indexoid, AccessShareLock);
    simhash_check_opened_index(index);
    if (!index->rd_index->indisvalid)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("cannot check index \"%s\"", RelationGetRelationName(index)),
                        errdetail("Index is not valid.")));
    refuse_index_needing_reindex(index, get_func_namespace(fcinfo->flinfo->fn_oid));

    MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "simhash check", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old_context = MemoryContextSwitchTo(context);
    Snapshot snapshot = concurrently ? RegisterSnapshot(GetTransactionSnapshot()) : InvalidSnapshot;
    CheckState *s = static_cast<CheckState *>(palloc0(sizeof(CheckState)));
    s->index = index;

    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    memcpy(meta, simhash_check_meta(index, BufferGetPage(meta_buffer)), sizeof(SimhashMetaData));
    if (!concurrently) LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    // Counted after the metapage is locked: every page it reaches exists by now.
    s->nblocks = RelationGetNumberOfBlocks(index);
    s->owner = static_cast<uint8 *>(palloc0(Max(s->nblocks, 1)));
    s->owner[SIMHASH_METAPAGE_BLKNO] = 1;
    // Page IDs of every page, reachable or not.
    for (BlockNumber blkno = 1; blkno < s->nblocks; ++blkno) {
        Buffer buffer = ReadBuffer(index, blkno);
        LockBuffer(buffer, BUFFER_LOCK_SHARE);
        Page page = BufferGetPage(buffer);
        if (!PageIsNew(page)) simhash_check_page(index, page, blkno, 0);
        UnlockReleaseBuffer(buffer);
    }

    for (uint32 i = 0; i < meta->nruns; ++i) {
        const BlockNumber before = s->claimed;
        check_run(s, &meta->runs[i], static_cast<int>(i + 1));
        const BlockNumber pages = s->claimed - before;
        if (pages != meta->runs[i].npages)
            corrupted(index, psprintf("run %u has %u pages, metapage says %u", i + 1, pages, meta->runs[i].npages));
        if (i > 0 && meta->runs[i].nentries > meta->runs[i - 1].nentries + meta->runs[i - 1].ndead &&
            meta->runs[i].ndead == 0 && meta->runs[i - 1].ndead == 0)
            corrupted(index, psprintf("runs %u and %u are not largest first", i, i + 1));
    }
    uint32 npages;
    if (check_pending(s, meta->pending_head, meta->pending_tail, &npages) != meta->npending || npages != meta->npending_pages)
        corrupted(index, "pending list entry or page count differs from the metapage");
    if (check_pending(s, meta->merge_head, meta->merge_tail, &npages) != meta->nmerge || npages != meta->nmerge_pages)
        corrupted(index, "merge list entry or page count differs from the metapage");
    for (uint32 i = 0; i < meta->nretired; ++i) {
        if (meta->retired[i].kind != SIMHASH_RUN && meta->retired[i].kind != SIMHASH_PENDING)
            corrupted(index, psprintf("retired set %u has an unknown kind", i));
        const BlockNumber before = s->claimed;
        simhash_visit_retired(index, &meta->retired[i], claim_visitor, s);
        if (s->claimed - before != meta->retired[i].npages)
            corrupted(index, psprintf("retired set %u has %u pages, metapage says %u", i, s->claimed - before,
                                      meta->retired[i].npages));
    }
    if (concurrently) LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    ReleaseBuffer(meta_buffer);
    qsort(s->all.items, s->all.n, sizeof(SimhashEntry), compare_entries);

    // Every heap tuple that needs an index entry has one.
    IndexInfo *indexInfo = BuildIndexInfo(index);
    TableScanDesc scan = nullptr;
    if (concurrently) {
        indexInfo->ii_Concurrent = true;  // report only what the snapshot sees, HOT chains by root
        scan = table_beginscan_strat(heap, snapshot, 0, nullptr, true, false);
    }
    table_index_build_scan(heap, index, indexInfo, true, false, heap_callback, s, scan);
    if (snapshot != InvalidSnapshot) UnregisterSnapshot(snapshot);

    MemoryContextSwitchTo(old_context);
    MemoryContextDelete(context);
    index_close(index, AccessShareLock);
    table_close(heap, heap_lock);
    PG_RETURN_VOID();
}
